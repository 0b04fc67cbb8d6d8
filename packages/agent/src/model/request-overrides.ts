/**
 * Merges `request_overrides` into a request body: top-level keys replace the body's, and the
 * contents of an `extra_body` key are merged into the body itself (what the SDK's `extra_body`
 * does), one level deep for mappings that both sides hold.
 */
export function applyRequestOverrides(
  body: Record<string, unknown>,
  overrides: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  if (!overrides) return body;
  const { extra_body: extraBody, ...topLevel } = overrides;
  const merged: Record<string, unknown> = { ...body, ...topLevel };
  if (extraBody && typeof extraBody === 'object' && !Array.isArray(extraBody)) {
    for (const [key, value] of Object.entries(extraBody as Record<string, unknown>)) {
      const current = merged[key];
      merged[key] =
        isMapping(current) && isMapping(value) ? { ...current, ...value } : (value as unknown);
    }
  }
  return merged;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
