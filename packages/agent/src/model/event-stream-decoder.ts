import { StringDecoder } from 'node:string_decoder';

/** One dispatched `text/event-stream` event. */
export interface ServerSentEvent {
  /** The `event:` field, `null` when the event had none. */
  readonly event: string | null;
  /** The `data:` lines joined with `\n` (`''` when there were none). */
  readonly data: string;
}

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * An incremental `text/event-stream` decoder: bytes in, in whatever pieces the socket delivers
 * them (a chunk may end inside a line, inside a `\r\n` or inside a UTF-8 character), events out,
 * each as soon as the blank line that ends it has arrived.
 *
 * Lines end at `\r\n`, `\n` or `\r`; a line starting with `:` is a comment; `data:` lines of one
 * event are joined with `\n`; one space after the colon is dropped; `id:`, `retry:` and unknown
 * fields are ignored (a model stream has no use for them); a byte-order mark opening the stream
 * is dropped; an event the stream ends before its blank line is discarded. As the `openai` SDK's
 * decoder does, an event is dispatched when it had a `data:` line or a non-empty `event:` — an
 * `event:`-only block arrives with `data` `''`.
 */
export class EventStreamDecoder {
  readonly #onEvent: (event: ServerSentEvent) => void;
  readonly #utf8 = new StringDecoder('utf8');
  /** The start of a line whose end has not arrived yet. */
  #partial = '';
  /** The last chunk ended with `\r`: a `\n` opening the next one belongs to that line end. */
  #afterCarriageReturn = false;
  #started = false;
  #event: string | null = null;
  #data: string | undefined;

  constructor(onEvent: (event: ServerSentEvent) => void) {
    this.#onEvent = onEvent;
  }

  /** Decodes the next piece of the body; events it completes are passed on before it returns. */
  push(chunk: Uint8Array): void {
    this.#feed(this.#utf8.write(chunk));
  }

  /** The body ended: whatever is left is an unfinished event, and is dropped. */
  end(): void {
    this.#utf8.end();
    this.#partial = '';
    this.#event = null;
    this.#data = undefined;
  }

  #feed(text: string): void {
    if (text === '') return;
    const buffer = this.#partial === '' ? text : this.#partial + text;
    let position = 0;
    if (!this.#started) {
      this.#started = true;
      if (buffer.charCodeAt(0) === 0xfeff) position = 1;
    }
    if (this.#afterCarriageReturn) {
      this.#afterCarriageReturn = false;
      if (buffer.charCodeAt(position) === LINE_FEED) position += 1;
    }
    // Most servers end lines with `\n` alone: look for `\r` only when the chunk has one.
    const hasCarriageReturn = buffer.indexOf('\r', position) !== -1;
    for (;;) {
      let end = buffer.indexOf('\n', position);
      if (hasCarriageReturn) {
        const carriageReturn = buffer.indexOf('\r', position);
        if (carriageReturn !== -1 && (end === -1 || carriageReturn < end)) end = carriageReturn;
      }
      if (end === -1) break;
      const line = buffer.slice(position, end);
      position = end + 1;
      if (buffer.charCodeAt(end) === CARRIAGE_RETURN) {
        if (position === buffer.length) this.#afterCarriageReturn = true;
        else if (buffer.charCodeAt(position) === LINE_FEED) position += 1;
      }
      this.#line(line);
    }
    this.#partial = buffer.slice(position);
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data === undefined && !this.#event) return;
      const event = { event: this.#event, data: this.#data ?? '' };
      this.#event = null;
      this.#data = undefined;
      this.#onEvent(event);
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data' && field !== 'event') return;
    const value =
      colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    if (field === 'event') this.#event = value;
    else this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
  }
}
