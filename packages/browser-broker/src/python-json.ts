/**
 * JSON text with the reference's separators (`", "` and `": "`) and non-ASCII kept as is, so a
 * routed tool returns byte-for-byte what the reference agent saw:
 * `{"title": "Example Domain", "url": "https://example.test/", "refs": []}`.
 */
export function toReferenceJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (value !== null && typeof value === 'object' && 'toJSON' in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === 'function') return write(toJSON.call(value));
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => write(item) ?? 'null').join(', ')}]`;
  }
  if (typeof value === 'object') {
    const parts: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      const text = write(item);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}: ${text}`);
    }
    return `{${parts.join(', ')}}`;
  }
  return JSON.stringify(value);
}
