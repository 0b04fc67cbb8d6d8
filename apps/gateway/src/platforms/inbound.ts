/** One message a platform delivered to the gateway, in the platform-neutral shape. */
export interface InboundMessage {
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  /** The platform's id of the message (unique within the chat). */
  readonly messageId: string;
  readonly userId: string | null;
  readonly userName: string | null;
  readonly text: string;
  /** Wall-clock ms when the gateway received it. */
  readonly receivedAt: number;
}

/** `telegram:12345:678` — names an inbound message across restarts (journal key, obligation ref). */
export function inboundRef(message: Pick<InboundMessage, 'platform' | 'chatId' | 'messageId'>) {
  return `${message.platform}:${message.chatId}:${message.messageId}`;
}

/** The session key of a chat: one conversation per (platform, chat, thread). */
export function chatSessionKey(
  message: Pick<InboundMessage, 'platform' | 'chatId' | 'threadId'>,
): string {
  return `agent:main:${message.platform}:${message.chatId}${message.threadId ? `:${message.threadId}` : ''}`;
}

/**
 * What an adapter hands inbound messages to. `accept` must make them durable (the journal) before
 * it resolves — only then may the adapter confirm them to the platform; `dispatch` runs them
 * afterwards (behind the restore gate).
 */
export interface InboundSink {
  accept(messages: readonly InboundMessage[]): Promise<void>;
  dispatch(messages: readonly InboundMessage[]): void;
}
