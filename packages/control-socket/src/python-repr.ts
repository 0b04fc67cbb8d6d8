/**
 * Characters Python's `str.isprintable()` rejects (other than the ASCII space): control, format,
 * surrogate, private-use and unassigned code points, and every separator. `repr` escapes them.
 */
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

/**
 * Containers nested deeper than this print as `[...]` / `{...}` (Python's spelling for a
 * container it will not expand). A request line may nest thousands of levels deep, and the reply
 * naming it must not overflow the stack.
 */
const MAX_REPR_DEPTH = 32;

function hexEscape(code: number): string {
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

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
    else if (character !== ' ' && NOT_PRINTABLE.test(character)) body += hexEscape(code);
    else body += character;
  }
  return `${quote}${body}${quote}`;
}

function reprAt(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return reprString(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return String(value);
  }
  if (Array.isArray(value)) {
    if (depth >= MAX_REPR_DEPTH) return '[...]';
    return `[${value.map((item) => reprAt(item, depth + 1)).join(', ')}]`;
  }
  if (typeof value === 'object') {
    if (depth >= MAX_REPR_DEPTH) return '{...}';
    const entries = Object.entries(value).map(
      ([key, item]) => `${reprString(key)}: ${reprAt(item, depth + 1)}`,
    );
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}

/**
 * Renders a JSON value the way Python's `repr` would, so `unknown verb: 'x'` and
 * `unknown verb: None` match the reference byte for byte.
 */
export function pythonRepr(value: unknown): string {
  return reprAt(value, 0);
}
