/**
 * Colour only where a person reads it: a TTY, `NO_COLOR` unset (any non-empty value turns colour
 * off, https://no-color.org), `TERM` not `dumb`. `FORCE_COLOR` (non-empty, not `0`) forces it on.
 */
export function colorEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export interface Styles {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

function wrap(open: number, close: number, enabled: boolean) {
  return enabled
    ? (text: string) => `\u001b[${open}m${text}\u001b[${close}m`
    : (text: string) => text;
}

export function createStyles(enabled: boolean): Styles {
  return {
    enabled,
    bold: wrap(1, 22, enabled),
    dim: wrap(2, 22, enabled),
    red: wrap(31, 39, enabled),
    green: wrap(32, 39, enabled),
    yellow: wrap(33, 39, enabled),
    cyan: wrap(36, 39, enabled),
    magenta: wrap(35, 39, enabled),
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ANSI = /\u001b\[[0-9;]*m/g;

/** The printed width of `text` (escapes removed; wide characters counted as one — good enough). */
export function visibleLength(text: string): number {
  return [...text.replace(ANSI, '')].length;
}
