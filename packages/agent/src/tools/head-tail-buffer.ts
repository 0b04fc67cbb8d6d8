/**
 * Keeps at most `maxChars` of a stream while it arrives: the first 40 % and the last 60 %, with
 * the count of what was dropped in between. Memory stays bounded however much a command prints.
 */
export class HeadTailBuffer {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  #head = '';
  #tail = '';
  #dropped = 0;

  constructor(maxChars: number) {
    this.#headLimit = Math.floor(maxChars * 0.4);
    this.#tailLimit = maxChars - this.#headLimit;
  }

  push(text: string): void {
    if (this.#head.length < this.#headLimit) {
      const room = this.#headLimit - this.#head.length;
      this.#head += text.slice(0, room);
      text = text.slice(room);
      if (text === '') return;
    }
    this.#tail += text;
    if (this.#tail.length > this.#tailLimit) {
      const excess = this.#tail.length - this.#tailLimit;
      this.#dropped += excess;
      this.#tail = this.#tail.slice(excess);
    }
  }

  get truncated(): boolean {
    return this.#dropped > 0;
  }

  toString(): string {
    if (this.#dropped === 0) return this.#head + this.#tail;
    return `${this.#head}\n\n… [${this.#dropped} characters of output omitted] …\n\n${this.#tail}`;
  }
}
