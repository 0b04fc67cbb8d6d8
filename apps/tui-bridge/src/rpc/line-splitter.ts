/**
 * Splits a byte stream into lines (`\n`, an optional `\r` before it dropped) without ever holding
 * more than `maxBytes` of one line: a longer line is reported once as `overflow` and the rest of
 * it is discarded up to its newline, so a flood cannot grow memory.
 */
export class LineSplitter {
  readonly #maxBytes: number;
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: () => void;
  #parts: Buffer[] = [];
  #size = 0;
  #discarding = false;

  constructor(options: {
    maxBytes: number;
    onLine: (line: string) => void;
    onOverflow: () => void;
  }) {
    this.#maxBytes = options.maxBytes;
    this.#onLine = options.onLine;
    this.#onOverflow = options.onOverflow;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.#discarding) {
        const piece = chunk.subarray(start, end);
        if (this.#size + piece.length > this.#maxBytes) {
          this.#parts = [];
          this.#size = 0;
          this.#discarding = true;
          this.#onOverflow();
        } else if (piece.length > 0) {
          this.#parts.push(piece);
          this.#size += piece.length;
        }
      }
      if (newline === -1) return;
      if (this.#discarding) this.#discarding = false;
      else this.#emit();
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (!this.#discarding && this.#size > 0) this.#emit();
    this.#parts = [];
    this.#size = 0;
    this.#discarding = false;
  }

  #emit(): void {
    let line = Buffer.concat(this.#parts, this.#size).toString('utf8');
    this.#parts = [];
    this.#size = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.#onLine(line);
  }
}
