import type { ChatMessage } from '../model/chat-message.js';
import type { FunctionSchema } from '../model/function-schema.js';

/** Characters per token assumed by the estimate (a common rule of thumb for English and code). */
export const CHARS_PER_TOKEN = 4;

/** A cheap prompt-size estimate: serialised characters ÷ 4, tools included. */
export function estimateTokens(
  messages: readonly ChatMessage[],
  tools: readonly FunctionSchema[] = [],
): number {
  let chars = 0;
  for (const message of messages) chars += JSON.stringify(message).length;
  for (const tool of tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
