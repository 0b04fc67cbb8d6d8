/**
 * Comparing what an example printed with what its README shows.
 *
 * Lines are compared without trailing whitespace; blank lines at the start and end are ignored.
 * In the README's text, `…` (U+2026) stands for any run of characters within one line (ids,
 * timestamps, paths), and a line that is only `…` stands for any number of lines.
 */
export const WILDCARD = '…';

function normalise(text: string): string[] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function expectedPattern(expected: string[]): RegExp {
  const source = expected
    .map((line) => {
      if (line.trim() === WILDCARD) return '(?:[^\\n]*\\n)*?';
      return `${line.split(WILDCARD).map(escapeRegExp).join('[^\\n]*?')}\\n`;
    })
    .join('');
  return new RegExp(`^${source}$`, 'u');
}

export interface OutputComparison {
  readonly matches: boolean;
  /** Expected and actual output, normalised, for a failure message. */
  readonly expected: string;
  readonly actual: string;
}

export function compareOutput(expected: string, actual: string): OutputComparison {
  const expectedLines = normalise(expected);
  const actualLines = normalise(actual);
  const subject = actualLines.map((line) => `${line}\n`).join('');
  return {
    matches: expectedPattern(expectedLines).test(subject),
    expected: expectedLines.join('\n'),
    actual: actualLines.join('\n'),
  };
}
