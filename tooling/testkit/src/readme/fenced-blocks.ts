export interface FencedBlock {
  /** First word of the info string, lower-cased ('' when none). */
  readonly language: string;
  readonly info: string;
  readonly content: string;
  /** 1-based README line of the opening fence; the block's first content line is `line + 1`. */
  readonly line: number;
  /** 1-based README line of the closing fence (the last line when the block is unterminated). */
  readonly endLine: number;
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** The lines of a markdown text, whatever its line endings. */
export function markdownLines(markdown: string): string[] {
  return markdown.replace(/\r\n?/g, '\n').split('\n');
}

/** CommonMark-style fenced code blocks (backticks or tildes, up to three spaces of indent). */
export function parseFencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdownLines(markdown);
  const blocks: FencedBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const opening = FENCE.exec(lines[index] ?? '');
    const fence = opening?.[2];
    if (!opening || !fence || (fence.startsWith('`') && (opening[3] ?? '').includes('`'))) {
      index += 1;
      continue;
    }
    const indent = (opening[1] ?? '').length;
    const info = (opening[3] ?? '').trim();
    const body: string[] = [];
    let closed = -1;
    for (let cursor = index + 1; cursor < lines.length; cursor += 1) {
      const text = lines[cursor] ?? '';
      const closing = FENCE.exec(text);
      if (
        closing?.[2] &&
        closing[2][0] === fence[0] &&
        closing[2].length >= fence.length &&
        (closing[3] ?? '').trim() === ''
      ) {
        closed = cursor;
        break;
      }
      body.push(text.slice(Math.min(indent, text.length - text.trimStart().length)));
    }
    const end = closed === -1 ? lines.length - 1 : closed;
    blocks.push({
      language: (info.split(/\s+/)[0] ?? '').toLowerCase(),
      info,
      content: body.join('\n'),
      line: index + 1,
      endLine: end + 1,
    });
    index = end + 1;
  }
  return blocks;
}
