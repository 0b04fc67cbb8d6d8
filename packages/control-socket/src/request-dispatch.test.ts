import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CONTROL_PROTOCOL_VERSION,
  DEFAULT_HANDLER_TIMEOUT_MS,
  MAX_RESPONSE_LINE_BYTES,
  REQUEST_NOT_OBJECT_ERROR,
  RESPONSE_SERIALIZATION_FAILED_ERROR,
  RESPONSE_TOO_LARGE_ERROR,
  UNKNOWN_VERB_ERROR_PREFIX,
  UNSUPPORTED_PROTOCOL_ERROR_PREFIX,
} from './constants.js';
import { dispatchRequestLine } from './request-dispatch.js';
import { type VerbHandlerContext, VerbRegistry } from './verb-registry.js';
import { ControlReplySchema } from './wire-schema.js';

const registry = new VerbRegistry({
  identify: () => ({ pid: 7 }),
  status: async () => ({ gateway_state: 'running' }),
  echo: (request) => request.payload ?? {},
  nothing: () => undefined,
  explode: () => {
    throw new RangeError('disk on fire');
  },
  circular: () => {
    const value: Record<string, unknown> = {};
    value.self = value;
    return value;
  },
  huge: () => ({ blob: 'x'.repeat(MAX_RESPONSE_LINE_BYTES) }),
  bigint: () => ({ big: 2n ** 70n }),
  mixed: () => ({
    plain: { list: [1, 'two', null, true, { deep: [0.5] }], text: 'é€😀' },
    fn: function namedHandler() {},
    nested: [{ symbol: Symbol('tag') }],
    when: new Date(0),
  }),
});

async function reply(line: string | Uint8Array): Promise<Record<string, unknown>> {
  const bytes = typeof line === 'string' ? Buffer.from(line) : line;
  const text = await dispatchRequestLine(bytes, registry);
  expect(text.endsWith('\n')).toBe(true);
  expect(text.indexOf('\n')).toBe(text.length - 1);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  expect(v.is(ControlReplySchema, parsed)).toBe(true);
  return parsed;
}

describe('dispatchRequestLine', () => {
  it('answers a known verb with ok, protocol 1, the result and the echoed id', async () => {
    expect(await reply('{"verb":"identify","id":"abc","protocol":1}')).toEqual({
      ok: true,
      protocol: CONTROL_PROTOCOL_VERSION,
      result: { pid: 7 },
      id: 'abc',
    });
  });

  it('omits id when the request had none or a null one', async () => {
    expect(await reply('{"verb":"status"}')).not.toHaveProperty('id');
    expect(await reply('{"verb":"status","id":null}')).not.toHaveProperty('id');
  });

  it('hands the validated request, payload included, to the handler', async () => {
    expect((await reply('{"verb":"echo","payload":{"a":[1,2]}}')).result).toEqual({ a: [1, 2] });
  });

  it('answers result null for a handler that returns nothing', async () => {
    expect(await reply('{"verb":"nothing"}')).toEqual({ ok: true, protocol: 1, result: null });
  });

  it('names an unknown verb Python-style and lists the supported verbs sorted', async () => {
    const body = await reply('{"verb":"restart","id":4}');
    expect(body).toEqual({
      ok: false,
      error: `${UNKNOWN_VERB_ERROR_PREFIX}'restart'`,
      protocol: 1,
      supported_verbs: registry.verbs(),
      id: 4,
    });
    expect(registry.verbs()).toEqual([...registry.verbs()].sort());
  });

  it('renders a missing, null or non-string verb as None / True / 3', async () => {
    expect((await reply('{}')).error).toBe('unknown verb: None');
    expect((await reply('{"verb":null}')).error).toBe('unknown verb: None');
    expect((await reply('{"verb":true}')).error).toBe('unknown verb: True');
    expect((await reply('{"verb":3}')).error).toBe('unknown verb: 3');
  });

  it('still answers when the verb or protocol is nested thousands of levels deep', async () => {
    const nested = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const verb = await reply(`{"verb":${nested},"id":3}`);
    expect(verb).toMatchObject({ ok: false, protocol: 1, id: 3 });
    expect(String(verb.error)).toMatch(/^unknown verb: \[\[\[.*\[\.\.\.\]/);
    const protocol = await reply(`{"verb":"identify","protocol":${nested}}`);
    expect(protocol).toMatchObject({ ok: false, supported_protocols: [1] });
    expect(String(protocol.error)).toMatch(/^unsupported protocol: \[\[\[/);
  });

  it('refuses a protocol other than 1 and says which it speaks', async () => {
    expect(await reply('{"verb":"identify","protocol":2,"id":1}')).toEqual({
      ok: false,
      error: `${UNSUPPORTED_PROTOCOL_ERROR_PREFIX}2`,
      protocol: 1,
      supported_protocols: [1],
      id: 1,
    });
  });

  it('treats "protocol": null as no protocol, like a null id', async () => {
    expect(await reply('{"verb":"identify","protocol":null,"id":3}')).toEqual({
      ok: true,
      protocol: CONTROL_PROTOCOL_VERSION,
      result: { pid: 7 },
      id: 3,
    });
  });

  it('reports invalid JSON as a SyntaxError with protocol 1', async () => {
    const body = await reply('{"verb":');
    expect(body.ok).toBe(false);
    expect(body.protocol).toBe(1);
    expect(String(body.error)).toMatch(/^SyntaxError: /);
  });

  it('reports invalid UTF-8 instead of decoding it with replacement characters', async () => {
    const body = await reply(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    expect(body.ok).toBe(false);
    expect(String(body.error)).toMatch(/^TypeError: /);
  });

  it('refuses JSON that is not an object', async () => {
    for (const line of ['[1,2]', '"identify"', '42', 'null']) {
      expect(await reply(line)).toEqual({
        ok: false,
        error: `TypeError: ${REQUEST_NOT_OBJECT_ERROR}`,
        protocol: 1,
      });
    }
  });

  it('validates the payload at the edge', async () => {
    const body = await reply('{"verb":"echo","payload":5,"id":9}');
    expect(body.ok).toBe(false);
    expect(body.id).toBe(9);
    expect(String(body.error)).toMatch(/^TypeError: invalid request field "payload"/);
  });

  it('turns a handler exception into "<ErrorName>: <message>"', async () => {
    expect(await reply('{"verb":"explode","id":2}')).toEqual({
      ok: false,
      error: 'RangeError: disk on fire',
      protocol: 1,
      id: 2,
    });
  });

  it('stringifies bigints rather than failing the reply', async () => {
    expect((await reply('{"verb":"bigint"}')).result).toEqual({ big: String(2n ** 70n) });
  });

  it('stringifies functions and symbols at any depth, and sends plain values as JSON has them', async () => {
    expect((await reply('{"verb":"mixed"}')).result).toEqual({
      plain: { list: [1, 'two', null, true, { deep: [0.5] }], text: 'é€😀' },
      fn: String(function namedHandler() {}),
      nested: [{ symbol: 'Symbol(tag)' }],
      when: '1970-01-01T00:00:00.000Z',
    });
  });

  it('sends a reply line of exactly 512 KiB and refuses one byte more', async () => {
    // Everything of the reply line but the blob itself, newline included.
    const frameBytes = Buffer.byteLength('{"ok":true,"protocol":1,"result":{"blob":""}}\n');
    const sized = new VerbRegistry({
      fits: () => ({ blob: 'x'.repeat(MAX_RESPONSE_LINE_BYTES - frameBytes) }),
      over: () => ({ blob: 'x'.repeat(MAX_RESPONSE_LINE_BYTES - frameBytes + 1) }),
    });
    const fits = await dispatchRequestLine(Buffer.from('{"verb":"fits"}'), sized);
    expect(Buffer.byteLength(fits)).toBe(MAX_RESPONSE_LINE_BYTES);
    expect(JSON.parse(fits)).toMatchObject({ ok: true });
    const over = await dispatchRequestLine(Buffer.from('{"verb":"over"}'), sized);
    expect(JSON.parse(over)).toEqual({ ok: false, error: RESPONSE_TOO_LARGE_ERROR });
  });

  it('answers exactly the last-resort bodies for unserialisable and oversize results', async () => {
    expect(await reply('{"verb":"circular","id":1}')).toEqual({
      ok: false,
      error: RESPONSE_SERIALIZATION_FAILED_ERROR,
    });
    expect(await reply('{"verb":"huge","id":1}')).toEqual({
      ok: false,
      error: RESPONSE_TOO_LARGE_ERROR,
    });
  });
});

describe('handler deadline', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers for a handler that never settles after the default deadline, and aborts it', async () => {
    vi.useFakeTimers();
    let signal: AbortSignal | undefined;
    const stuck = new VerbRegistry({
      stuck: (_request, context) => {
        signal = context?.signal;
        return new Promise(() => {});
      },
    });
    let text: string | undefined;
    void dispatchRequestLine(Buffer.from('{"verb":"stuck","id":1}'), stuck).then((line) => {
      text = line;
    });
    await vi.advanceTimersByTimeAsync(DEFAULT_HANDLER_TIMEOUT_MS - 1);
    expect(text).toBeUndefined();
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(JSON.parse(text ?? 'null')).toEqual({
      ok: false,
      error: `TimeoutError: verb 'stuck' did not answer within ${DEFAULT_HANDLER_TIMEOUT_MS} ms`,
      protocol: 1,
      id: 1,
    });
    expect(signal?.aborted).toBe(true);
  });

  it('hands a handler that looks at its signal only after the deadline an aborted one', async () => {
    const seen: VerbHandlerContext[] = [];
    const late = new VerbRegistry({
      late: (_request, context) => {
        if (context) seen.push(context);
        return new Promise(() => {});
      },
    });
    const text = await dispatchRequestLine(Buffer.from('{"verb":"late"}'), late, {
      handlerTimeoutMs: 20,
    });
    expect(JSON.parse(text)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^TimeoutError/),
    });
    expect(seen[0]?.signal.aborted).toBe(true);
    expect(seen[0]?.signal.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('stops waiting for a handler whose caller gave up', async () => {
    const caller = new AbortController();
    const waiting = new VerbRegistry({ wait: () => new Promise(() => {}) });
    const pending = dispatchRequestLine(Buffer.from('{"verb":"wait"}'), waiting, {
      signal: caller.signal,
    });
    caller.abort();
    expect(JSON.parse(await pending)).toEqual({
      ok: false,
      error: "AbortError: verb 'wait' was abandoned by the caller",
      protocol: 1,
    });
  });

  it('still answers a handler that throws synchronously', async () => {
    expect(await reply('{"verb":"explode"}')).toMatchObject({ error: 'RangeError: disk on fire' });
  });
});
