import type { ChatMessage } from '../model/chat-message.js';
import type { FunctionSchema } from '../model/function-schema.js';

/** Characters per token assumed by the estimate (a common rule of thumb for English and code). */
export const CHARS_PER_TOKEN = 4;

/** Serialised characters of one message, the unit `estimateTokens` counts. */
export function messageChars(message: ChatMessage): number {
  return JSON.stringify(message).length;
}

/** A cheap prompt-size estimate: serialised characters ÷ 4, tools included. */
export function estimateTokens(
  messages: readonly ChatMessage[],
  tools: readonly FunctionSchema[] = [],
): number {
  let chars = 0;
  for (const message of messages) chars += messageChars(message);
  for (const tool of tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
