/** Small formatters shared by commands. */

/** `2025-12-03 10:04` in local time from epoch seconds (or `-`). */
export function formatTime(epochSeconds: number | null | undefined): string {
  if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds))
    return '-';
  const date = new Date(epochSeconds * 1000);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `3 min ago`, `2 h ago`, `5 d ago` from epoch seconds. */
export function formatAge(epochSeconds: number | null | undefined, nowMs = Date.now()): string {
  if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds))
    return '-';
  const seconds = Math.max(0, nowMs / 1000 - epochSeconds);
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** `1h 2m 3s` for a duration in seconds. */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = total % 60;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${rest}s`;
  return `${rest}s`;
}

/** A compact one-line preview of some text. */
export function oneLine(text: string | null | undefined, max = 80): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` with the characters a terminal acts on made visible: C0 controls as `^[`, `^G`, `^M`
 * (newline and tab kept when `multiline`), DEL as `^?`, C1 controls as `\u009b`. What a
 * conversation holds comes from any platform and any model: shown to a person, it must not clear
 * the screen, retitle the window or colour what follows.
 */
export function printable(text: string, options: { multiline?: boolean } = {}): string {
  return text.replace(CONTROL_CHARACTERS, (character) => {
    if (options.multiline && (character === '\n' || character === '\t')) return character;
    const code = character.charCodeAt(0);
    if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
    if (code === 0x7f) return '^?';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** `1 message`, `3 messages`: a count with its noun (plural with an `s` unless given). */
export function count(value: number, noun: string, plural = `${noun}s`): string {
  return `${value} ${value === 1 ? noun : plural}`;
}
