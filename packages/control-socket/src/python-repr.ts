function reprString(text: string): string {
  // Python picks single quotes unless the text holds a single quote and no double quote.
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    if (character === '\\') body += '\\\\';
    else if (character === quote) body += `\\${quote}`;
    else if (character === '\n') body += '\\n';
    else if (character === '\r') body += '\\r';
    else if (character === '\t') body += '\\t';
    else if (code < 0x20 || code === 0x7f) body += `\\x${code.toString(16).padStart(2, '0')}`;
    else body += character;
  }
  return `${quote}${body}${quote}`;
}

/**
 * Renders a JSON value the way Python's `repr` would, so `unknown verb: 'x'` and
 * `unknown verb: None` match the reference byte for byte.
 */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return reprString(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(
      ([key, item]) => `${reprString(key)}: ${pythonRepr(item)}`,
    );
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}
