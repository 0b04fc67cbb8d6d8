import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

function collect(maxBytes: number) {
  const lines: string[] = [];
  let overflows = 0;
  const splitter = new LineSplitter({
    maxBytes,
    onLine: (line) => lines.push(line),
    onOverflow: () => {
      overflows += 1;
    },
  });
  return { splitter, lines, overflows: () => overflows };
}

describe('LineSplitter', () => {
  it('joins lines split across chunks and drops a CR before the newline', () => {
    const { splitter, lines } = collect(100);
    splitter.push(Buffer.from('{"a":'));
    splitter.push(Buffer.from('1}\r\n{"b"'));
    splitter.push(Buffer.from(':2}\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('keeps a multi-byte character split between chunks intact', () => {
    const { splitter, lines } = collect(100);
    const bytes = Buffer.from('"é"\n');
    splitter.push(bytes.subarray(0, 2));
    splitter.push(bytes.subarray(2));
    expect(lines).toEqual(['"é"']);
  });

  it('reports an overlong line once, discards it to its newline and goes on', () => {
    const { splitter, lines, overflows } = collect(8);
    splitter.push(Buffer.from('0123456789'));
    splitter.push(Buffer.from('abcdef\nok\n'));
    expect(overflows()).toBe(1);
    expect(lines).toEqual(['ok']);
  });

  it('emits a last line without a newline at the end of input', () => {
    const { splitter, lines } = collect(100);
    splitter.push(Buffer.from('a\nb'));
    splitter.end();
    expect(lines).toEqual(['a', 'b']);
  });
});
