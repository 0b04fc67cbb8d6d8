/**
 * JSON as the fuzzer writes it: a tree whose objects are entry lists (so a key may repeat, and
 * `__proto__` is an ordinary key) and whose leaves may be raw JSON text (`1e309`, `-0`, a lone
 * surrogate escape, 10 000 levels of nesting) that `JSON.stringify` could never produce.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export class JsonObject {
  constructor(readonly entries: [string, JsonText][]) {}

  get(key: string): JsonText | undefined {
    return this.entries.find(([name]) => name === key)?.[1];
  }
}

export type JsonText = null | boolean | number | string | RawJson | JsonObject | JsonText[];

/** A plain JSON value (a request as a client would build it) as a `JsonText` tree. */
export function fromPlain(value: unknown): JsonText {
  if (Array.isArray(value)) return value.map(fromPlain);
  if (value !== null && typeof value === 'object') {
    return new JsonObject(Object.entries(value).map(([key, item]) => [key, fromPlain(item)]));
  }
  return value as JsonText;
}

export function serialize(value: JsonText): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonObject) {
    return `{${value.entries.map(([key, item]) => `${JSON.stringify(key)}:${serialize(item)}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  return JSON.stringify(value);
}

/** A deep copy, so a mutation of one request never reaches the template it came from. */
export function cloneJson(value: JsonText): JsonText {
  if (value instanceof JsonObject)
    return new JsonObject(value.entries.map(([key, item]) => [key, cloneJson(item)]));
  if (Array.isArray(value)) return value.map(cloneJson);
  return value;
}

/** Every place in the tree a value sits, as the container and the index or entry in it. */
export type Slot =
  | { readonly kind: 'entry'; readonly object: JsonObject; readonly index: number; path: string }
  | { readonly kind: 'item'; readonly array: JsonText[]; readonly index: number; path: string };

export function slotsOf(value: JsonText, path = ''): Slot[] {
  const slots: Slot[] = [];
  if (value instanceof JsonObject) {
    value.entries.forEach(([key, item], index) => {
      const here = path ? `${path}.${key}` : key;
      slots.push({ kind: 'entry', object: value, index, path: here });
      slots.push(...slotsOf(item, here));
    });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      const here = `${path}.${index}`;
      slots.push({ kind: 'item', array: value, index, path: here });
      slots.push(...slotsOf(item, here));
    });
  }
  return slots;
}

export function setSlot(slot: Slot, replacement: JsonText): void {
  if (slot.kind === 'entry') {
    const entry = slot.object.entries[slot.index];
    if (entry) entry[1] = replacement;
  } else slot.array[slot.index] = replacement;
}

export function dropSlot(slot: Slot): void {
  if (slot.kind === 'entry') slot.object.entries.splice(slot.index, 1);
  else slot.array.splice(slot.index, 1);
}

/** The objects of a tree (the root included), where an unknown field can be added. */
export function objectsOf(value: JsonText): JsonObject[] {
  const found: JsonObject[] = [];
  if (value instanceof JsonObject) {
    found.push(value);
    for (const [, item] of value.entries) found.push(...objectsOf(item));
  } else if (Array.isArray(value)) for (const item of value) found.push(...objectsOf(item));
  return found;
}
