import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FILE, renderBrowserControlJsonSchema } from '../scripts/json-schema.js';
import {
  CommandFrameSchema,
  HeartbeatRequestFrameSchema,
  parseFrameText,
  ResultFrameSchema,
} from './protocol.js';

describe('protocol', () => {
  it('matches the checked-in JSON Schema (run `pnpm schema` after changing a frame)', async () => {
    const onDisk = await readFile(JSON_SCHEMA_FILE, 'utf8');
    expect(onDisk).toBe(renderBrowserControlJsonSchema());
  });

  it('requires the reference fields of a command, with explicit nulls', () => {
    const frame = {
      method: 'browser.controller.command',
      params: {
        command_id: '0123456789abcdef0123456789abcdef',
        action: 'browser_snapshot',
        arguments: {},
        controller_id: null,
        browser_profile_id: 'b',
        tool_call_id: null,
      },
    };
    expect(v.safeParse(CommandFrameSchema, frame).success).toBe(true);
    const { tool_call_id: _dropped, ...withoutToolCall } = frame.params;
    expect(v.safeParse(CommandFrameSchema, { ...frame, params: withoutToolCall }).success).toBe(
      false,
    );
    expect(
      v.safeParse(CommandFrameSchema, { ...frame, params: { ...frame.params, command_id: 'ABC' } })
        .success,
    ).toBe(false);
  });

  it('keeps a non-boolean ok so the broker can reject it instead of dropping the result', () => {
    const parsed = v.safeParse(ResultFrameSchema, {
      method: 'browser.controller.result',
      params: { command_id: 'x', ok: 'false', error: 'nope' },
    });
    expect(parsed.success && parsed.output.params.ok).toBe('false');
  });

  it('bounds heartbeat nonces to 1..128 characters', () => {
    const heartbeat = (nonce: string) =>
      v.safeParse(HeartbeatRequestFrameSchema, {
        method: 'browser.controller.heartbeat',
        params: { nonce },
      }).success;
    expect(heartbeat('n')).toBe(true);
    expect(heartbeat('x'.repeat(128))).toBe(true);
    expect(heartbeat('')).toBe(false);
    expect(heartbeat('x'.repeat(129))).toBe(false);
  });

  it('reads only JSON objects with a method and object params', () => {
    expect(parseFrameText('not json')).toBeNull();
    expect(parseFrameText('[1]')).toBeNull();
    expect(parseFrameText('{"method":"m","params":[]}')).toBeNull();
    expect(parseFrameText('{"method":"m","params":{}}')).toEqual({ method: 'm', params: {} });
  });
});
