import { describe, expect, it } from 'vitest';
import {
  AUTOMATIC_END_REASONS,
  BOUNDARY_END_REASONS,
  RECOVERABLE_END_REASONS,
  RECOVERABLE_END_REASONS_SQL,
  RESET_END_REASONS,
  RESET_END_REASONS_SQL,
  toSqlList,
} from './end-reasons.js';

describe('end-reason catalogue', () => {
  it('defines the recoverable set and derives the wider sets from the narrower ones', () => {
    expect([...RECOVERABLE_END_REASONS]).toEqual([
      'agent_close',
      'ws_orphan_reap',
      'superseded_by_resume',
      'startup_orphan_reap',
    ]);
    expect(AUTOMATIC_END_REASONS).toEqual(expect.arrayContaining([...RECOVERABLE_END_REASONS]));
    expect(BOUNDARY_END_REASONS).toEqual([...RESET_END_REASONS, 'new_session']);
  });

  it('renders the SQL lists from the same arrays', () => {
    expect(RECOVERABLE_END_REASONS_SQL).toBe(
      RECOVERABLE_END_REASONS.map((reason) => `'${reason}'`).join(', '),
    );
    expect(RESET_END_REASONS_SQL.split(', ')).toHaveLength(RESET_END_REASONS.length);
    expect(() => toSqlList(["x'); DROP TABLE sessions; --"])).toThrow(/unsafe/);
  });
});
