function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of an OpenAI-format message's `content`: a string as is; for a list of parts, each text
 * part's `text` and a `[<type>]` placeholder for every other part (`[image_url]`; `[attachment]`
 * when the part has no type), non-empty pieces joined by newlines; anything else `''`.
 */
export function extractMessageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const pieces: string[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    const piece =
      part.type === 'text'
        ? typeof part.text === 'string'
          ? part.text
          : ''
        : `[${typeof part.type === 'string' && part.type.length > 0 ? part.type : 'attachment'}]`;
    if (piece.length > 0) pieces.push(piece);
  }
  return pieces.join('\n');
}

export { isRecord };
