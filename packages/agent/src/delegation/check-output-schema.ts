/**
 * Checks a subagent's final answer against the `output_schema` it was given. It covers the
 * JSON Schema keywords a structured answer uses (`type`, `properties`, `required`, `items`,
 * `enum`, `const`, `additionalProperties: false`, `minItems`, `maxItems`); other keywords are
 * not checked. Returns the problems found (empty when the value matches).
 */
export function checkOutputSchema(
  value: unknown,
  schema: Readonly<Record<string, unknown>>,
): string[] {
  const errors: string[] = [];
  visit(value, schema, '$', errors);
  return errors.slice(0, 20);
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function visit(value: unknown, schema: unknown, where: string, errors: string[]): void {
  if (!isRecord(schema)) return;
  const types =
    typeof schema.type === 'string'
      ? [schema.type]
      : Array.isArray(schema.type)
        ? (schema.type as unknown[]).filter((entry): entry is string => typeof entry === 'string')
        : [];
  if (types.length > 0 && !types.some((type) => matchesType(value, type))) {
    errors.push(`${where}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((entry) => sameJson(entry, value)))
    errors.push(`${where}: must be one of ${JSON.stringify(schema.enum)}`);
  if ('const' in schema && !sameJson(schema.const, value))
    errors.push(`${where}: must equal ${JSON.stringify(schema.const)}`);
  if (isRecord(value)) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required))
      for (const key of schema.required)
        if (typeof key === 'string' && !(key in value))
          errors.push(`${where}: missing required property '${key}'`);
    for (const [key, child] of Object.entries(value)) {
      if (key in properties) visit(child, properties[key], `${where}.${key}`, errors);
      else if (schema.additionalProperties === false)
        errors.push(`${where}: unexpected property '${key}'`);
      else if (isRecord(schema.additionalProperties))
        visit(child, schema.additionalProperties, `${where}.${key}`, errors);
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      errors.push(`${where}: needs at least ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      errors.push(`${where}: allows at most ${schema.maxItems} items`);
    if (isRecord(schema.items))
      for (const [index, item] of value.entries())
        visit(item, schema.items, `${where}[${index}]`, errors);
  }
}

function sameJson(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

/** The JSON value inside a final answer: the whole text, or the body of one fenced block. */
export function parseJsonAnswer(text: string): { value: unknown } | { error: string } {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(trimmed);
  const body = fenced ? (fenced[1] ?? '') : trimmed;
  try {
    return { value: JSON.parse(body) };
  } catch (error) {
    return { error: `the final answer is not JSON (${(error as Error).message})` };
  }
}
