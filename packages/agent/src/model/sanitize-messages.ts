import type { ChatMessage } from './chat-message.js';

/** Message keys that are ours, never the provider's (§7.3). */
const INTERNAL_MESSAGE_KEYS = new Set([
  'codex_reasoning_items',
  'codex_message_items',
  'tool_name',
  'timestamp',
  'observed',
  'reasoning',
]);
const INTERNAL_TOOL_CALL_KEYS = new Set(['call_id', 'response_item_id']);

function keepsGeminiExtras(model: string): boolean {
  return /gemini|gemma/i.test(model);
}

function stripKeys(
  value: Record<string, unknown>,
  drop: (key: string) => boolean,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) if (!drop(key)) result[key] = entry;
  return result;
}

/**
 * Copies messages for the wire: strips internal keys (any key starting with `_`, the reference's
 * bookkeeping keys and our stored reasoning), `call_id` / `response_item_id` on tool calls, and
 * Gemini's `extra_content` unless the target model is Gemini or Gemma. Never mutates its input.
 */
export function sanitizeMessages(
  messages: readonly ChatMessage[],
  model: string,
): Record<string, unknown>[] {
  const keepExtras = keepsGeminiExtras(model);
  return messages.map((message) => sanitizeOne(message, keepExtras));
}

function sanitizeOne(message: ChatMessage, keepExtras: boolean): Record<string, unknown> {
  const dropKey = (key: string) =>
    key.startsWith('_') ||
    INTERNAL_MESSAGE_KEYS.has(key) ||
    (key === 'extra_content' && !keepExtras);
  const clean = stripKeys(message as unknown as Record<string, unknown>, dropKey);
  if (Array.isArray(clean.tool_calls)) {
    clean.tool_calls = (clean.tool_calls as Record<string, unknown>[]).map((call) =>
      stripKeys(
        call,
        (key) =>
          key.startsWith('_') ||
          INTERNAL_TOOL_CALL_KEYS.has(key) ||
          (key === 'extra_content' && !keepExtras),
      ),
    );
  }
  return clean;
}

// The loop's history only grows, and its messages are never changed once pushed: each one is
// sanitised once per turn instead of once per model call (which made every call O(history)).
const wireCopies = [
  new WeakMap<object, Readonly<Record<string, unknown>>>(),
  new WeakMap<object, Readonly<Record<string, unknown>>>(),
];

/**
 * `sanitizeMessages` for the transport: the same result, with each message's sanitised copy
 * remembered (by identity) for later calls. The copies are shared — read-only.
 */
export function sanitizeMessagesForWire(
  messages: readonly ChatMessage[],
  model: string,
): Readonly<Record<string, unknown>>[] {
  const keepExtras = keepsGeminiExtras(model);
  const cache = wireCopies[keepExtras ? 1 : 0] as WeakMap<
    object,
    Readonly<Record<string, unknown>>
  >;
  return messages.map((message) => {
    let copy = cache.get(message);
    if (!copy) {
      copy = sanitizeOne(message, keepExtras);
      cache.set(message, copy);
    }
    return copy;
  });
}
