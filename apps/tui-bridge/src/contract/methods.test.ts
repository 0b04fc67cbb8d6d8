import { LIST_SESSIONS_MAX_LIMIT } from '@hermes/session-store';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { SESSION_LIST_DEFAULT_LIMIT } from '../constants.js';
import { METHODS, SESSION_LIST_MAX_LIMIT } from './methods.js';

describe('session.list params', () => {
  it('take a page no larger than the session store serves in one call, the default included', () => {
    expect(SESSION_LIST_MAX_LIMIT).toBe(LIST_SESSIONS_MAX_LIMIT);
    expect(SESSION_LIST_DEFAULT_LIMIT).toBeLessThanOrEqual(LIST_SESSIONS_MAX_LIMIT);
    const params = METHODS['session.list'].params;
    expect(v.is(params, { limit: LIST_SESSIONS_MAX_LIMIT })).toBe(true);
    expect(v.is(params, { limit: LIST_SESSIONS_MAX_LIMIT + 1 })).toBe(false);
  });
});
