import { RECOVERED_MARKER, type SessionStore } from '@hermes/session-store';
import type { PlatformAdapter } from '@hermes/supervisor';
import type { Logger } from 'pino';

/** How long one send may take before it counts as failed (boot and runtime). */
export const OWED_SEND_TIMEOUT_MS = 30_000;

export interface OwedReply {
  readonly obligationId: string;
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly content: string;
  /** The first send may have reached the chat: prefix `RECOVERED_MARKER`. */
  readonly needsMarker: boolean;
  /** The platform message it answers (threading only). */
  readonly replyTo?: string | undefined;
  /** Epoch seconds before which it must not be sent (flood control, retry backoff). */
  notBefore: number | null;
}

/** What replies are sent through: a connected adapter, or a profile's view of one. */
export type ReplySender = Pick<PlatformAdapter, 'send' | 'sendTyping'>;

export interface OwedRepliesOptions {
  readonly store: () => Promise<SessionStore>;
  readonly adapter: (platform: string) => ReplySender | undefined;
  readonly logger: Logger;
  readonly sendTimeoutMs?: number;
  /** Multiplies retry waits (tests run faster). */
  readonly timeScale?: number;
  readonly onDelivered?: (reply: OwedReply) => void;
}

/**
 * The replies this process owes, each backed by a `delivery_obligations` row recorded before the
 * first send. A reply leaves only when the ledger says delivered (or gave up after 3 attempts);
 * while its platform is down it waits for the reconnect, and a failed send is retried on the
 * ledger's backoff (30 s, 120 s; flood control honoured).
 */
export class OwedReplies {
  readonly #rows = new Map<string, OwedReply>();
  readonly #sending = new Set<string>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #options: OwedRepliesOptions;
  #stopped = false;

  constructor(options: OwedRepliesOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#rows.size;
  }

  backlog(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const row of this.#rows.values()) counts[row.platform] = (counts[row.platform] ?? 0) + 1;
    return counts;
  }

  add(reply: OwedReply): void {
    if (!this.#rows.has(reply.obligationId)) this.#rows.set(reply.obligationId, reply);
  }

  /** Sends every owed reply of `platform` (all platforms when omitted), one at a time, in order. */
  async deliver(platform?: string): Promise<number> {
    let delivered = 0;
    for (const row of [...this.#rows.values()]) {
      if (platform !== undefined && row.platform !== platform) continue;
      if (await this.deliverOne(row.obligationId)) delivered += 1;
    }
    return delivered;
  }

  /** One attempt for one reply; true when the ledger now says delivered. */
  async deliverOne(obligationId: string): Promise<boolean> {
    const row = this.#rows.get(obligationId);
    if (!row || this.#stopped || this.#sending.has(obligationId)) return false;
    const now = Date.now() / 1000;
    if (row.notBefore !== null && row.notBefore > now) {
      this.#schedule(row, row.notBefore - now);
      return false;
    }
    const adapter = this.#options.adapter(row.platform);
    if (!adapter) return false; // sent when the platform reconnects
    this.#sending.add(obligationId);
    try {
      const store = await this.#options.store();
      // Durable before visible: the attempt is on record before the send can reach the chat.
      if (!(await store.beginObligationAttempt(obligationId))) {
        this.#rows.delete(obligationId);
        return false;
      }
      const content = row.needsMarker ? `${RECOVERED_MARKER}\n\n${row.content}` : row.content;
      const signal = AbortSignal.timeout(this.#options.sendTimeoutMs ?? OWED_SEND_TIMEOUT_MS);
      const result = await adapter
        .send(row.chatId, content, {
          threadId: row.threadId ?? undefined,
          replyTo: row.replyTo,
          idempotencyKey: row.obligationId,
          signal,
        })
        .catch((error: unknown) => ({
          success: false as const,
          error: error instanceof Error ? error.message : String(error),
          retryable: true,
        }));
      if (result.success) {
        await store.completeObligation(obligationId);
        this.#rows.delete(obligationId);
        this.#options.onDelivered?.(row);
        return true;
      }
      const error = result.error ?? 'send failed';
      const state = await store.failObligation(obligationId, error);
      if (state === 'pending') {
        const settled = store.getObligation(obligationId);
        row.notBefore = settled?.notBefore ?? now + 30;
        this.#options.logger.warn(
          { obligationId, platform: row.platform, error },
          'reply not delivered; retrying later',
        );
        this.#schedule(row, row.notBefore - now);
      } else {
        this.#rows.delete(obligationId);
        this.#options.logger.error(
          { obligationId, platform: row.platform, error, state },
          'reply could not be delivered; giving up',
        );
      }
      return false;
    } finally {
      this.#sending.delete(obligationId);
    }
  }

  #schedule(row: OwedReply, inS: number): void {
    if (this.#stopped || this.#timers.has(row.obligationId)) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(row.obligationId);
        void this.deliverOne(row.obligationId);
      },
      Math.max(0, inS) * 1000 * (this.#options.timeScale ?? 1),
    );
    timer.unref();
    this.#timers.set(row.obligationId, timer);
  }

  /** Stops retrying; rows stay owed in the ledger (the next start redelivers them). */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
