/**
 * The bare media type of a `Content-Type` value: parameters after `;` dropped, trimmed and
 * lower-cased (`Image/PNG; charset=x` → `image/png`). A missing value becomes `''`.
 */
export function normalizeContentType(value: string | null | undefined): string {
  if (typeof value !== 'string') return '';
  const semicolon = value.indexOf(';');
  const bare = semicolon === -1 ? value : value.slice(0, semicolon);
  return bare.trim().toLowerCase();
}
