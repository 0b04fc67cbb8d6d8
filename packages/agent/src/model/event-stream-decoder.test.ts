import { _iterSSEMessages } from 'openai/core/streaming';
import { describe, expect, it } from 'vitest';
import { EventStreamDecoder, type ServerSentEvent } from './event-stream-decoder.js';

const encoder = new TextEncoder();

/** Decodes `pieces` in order, as a socket would deliver them. */
function decode(pieces: readonly Uint8Array[]): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const decoder = new EventStreamDecoder((event) => events.push(event));
  for (const piece of pieces) decoder.push(piece);
  decoder.end();
  return events;
}

/** What the `openai` SDK's own decoder makes of the same bytes. */
async function decodeWithSdk(bytes: Uint8Array): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const { event, data } of _iterSSEMessages(new Response(bytes), new AbortController()))
    events.push({ event, data });
  return events;
}

// Every feature at once: LF, CRLF and lone-CR line ends, comments, multi-line data, no space
// after the colon, `event:` and ignored fields, multi-byte characters, and the end marker.
const mixed = encoder.encode(
  [
    ': keep-alive comment\n\n',
    'data: {"a":"é — 雪 🦊"}\n\n',
    'data: line one\r\ndata: line two\r\n\r\n',
    'data:no-space\rdata:  two spaces\r\r',
    'id: 7\nretry: 10\nevent: delta\ndata: {"b":1}\n: inside\n\n',
    'data\n\n',
    'data: [DONE]\n\n',
  ].join(''),
);
const mixedEvents: ServerSentEvent[] = [
  { event: null, data: '{"a":"é — 雪 🦊"}' },
  { event: null, data: 'line one\nline two' },
  { event: null, data: 'no-space\n two spaces' },
  { event: 'delta', data: '{"b":1}' },
  { event: null, data: '' },
  { event: null, data: '[DONE]' },
];

describe('EventStreamDecoder', () => {
  it('decodes data lines, multi-line data, comments, fields, CRLF and CR, and [DONE]', () => {
    expect(decode([mixed])).toEqual(mixedEvents);
  });

  it('gives the same events whichever byte offset the stream is split at', () => {
    for (let offset = 0; offset <= mixed.length; offset += 1)
      expect(decode([mixed.subarray(0, offset), mixed.subarray(offset)]), `at ${offset}`).toEqual(
        mixedEvents,
      );
  });

  it('gives the same events split at every pair of offsets, and fed one byte at a time', () => {
    for (let first = 0; first <= mixed.length; first += 1)
      for (let second = first; second <= mixed.length; second += 7)
        expect(
          decode([mixed.subarray(0, first), mixed.subarray(first, second), mixed.subarray(second)]),
          `at ${first} and ${second}`,
        ).toEqual(mixedEvents);
    const bytes = Array.from(mixed, (byte) => Uint8Array.of(byte));
    expect(decode(bytes)).toEqual(mixedEvents);
  });

  it('passes each event on as soon as its blank line arrives', () => {
    const events: ServerSentEvent[] = [];
    const decoder = new EventStreamDecoder((event) => events.push(event));
    decoder.push(encoder.encode('data: one\n'));
    expect(events).toEqual([]);
    decoder.push(encoder.encode('\ndata: tw'));
    expect(events).toEqual([{ event: null, data: 'one' }]);
    decoder.push(encoder.encode('o\r'));
    decoder.push(encoder.encode('\r'));
    expect(events).toEqual([
      { event: null, data: 'one' },
      { event: null, data: 'two' },
    ]);
  });

  it('drops an event the stream ends before its blank line, and a leading byte-order mark', () => {
    expect(decode([encoder.encode('\ufeffdata: kept\n\ndata: cut short\n')])).toEqual([
      { event: null, data: 'kept' },
    ]);
  });

  it('does not take a CR at the end of one chunk and an LF opening the next for two line ends', () => {
    expect(
      decode([
        encoder.encode('data: a\r'),
        encoder.encode('\ndata: b\r'),
        encoder.encode('\n\r\n'),
      ]),
    ).toEqual([{ event: null, data: 'a\nb' }]);
  });

  it("dispatches exactly what the openai SDK's decoder dispatches", async () => {
    const streams = [
      mixed,
      encoder.encode('event: only\n\nevent:\n\ndata: x\n\n'),
      encoder.encode('data: a\n\n\n\n: c\n\ndata: b\ndata:\n\n'),
      encoder.encode('data: no end'),
      encoder.encode('data:  {"x":1}\r\n\r\nfield without colon\ndata: y\n\n'),
    ];
    for (const bytes of streams) expect(decode([bytes])).toEqual(await decodeWithSdk(bytes));
  });
});
