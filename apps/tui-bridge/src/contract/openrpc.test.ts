import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RPC_ERROR_CODES } from './error-codes.js';
import { EVENT_TYPES } from './events.js';
import { METHOD_NAMES } from './methods.js';
import { renderOpenRpcDocument } from './openrpc-file.js';

const committed = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'openrpc.schema.json',
);

describe('openrpc.schema.json', () => {
  it('is exactly what the contract generates (run `pnpm --filter @hermes/tui-bridge openrpc:generate` after a change)', () => {
    expect(readFileSync(committed, 'utf8')).toBe(renderOpenRpcDocument());
  });

  it('lists every method with its params, every event and every error code', () => {
    const document = JSON.parse(renderOpenRpcDocument()) as {
      methods: { name: string; params: { name: string; required: boolean }[] }[];
      components: { errors: Record<string, { code: number }> };
      'x-events': Record<string, unknown>;
    };
    expect(document.methods.map((method) => method.name)).toEqual(METHOD_NAMES);
    expect(Object.keys(document['x-events'])).toEqual(EVENT_TYPES);
    expect(Object.values(document.components.errors).map((error) => error.code)).toEqual(
      Object.values(RPC_ERROR_CODES),
    );
    const submit = document.methods.find((method) => method.name === 'prompt.submit');
    expect(submit?.params).toEqual([
      expect.objectContaining({ name: 'session_id', required: true }),
      expect.objectContaining({ name: 'text', required: true }),
    ]);
  });
});
