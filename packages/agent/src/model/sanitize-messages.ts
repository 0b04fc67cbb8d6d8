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
  const dropKey = (key: string) =>
    key.startsWith('_') ||
    INTERNAL_MESSAGE_KEYS.has(key) ||
    (key === 'extra_content' && !keepExtras);
  return messages.map((message) => {
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
  });
}
