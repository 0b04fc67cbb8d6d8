import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import {
  acquireLease,
  type LeaseTable,
  readLease,
  releaseLease,
  renewLease,
  validateLeaseOptions,
} from './leases.js';
import type { StoreContext } from './store-context.js';

/** Default turn lease; a turn that runs longer renews it (every third of the TTL is plenty). */
export const TURN_LEASE_TTL_SECONDS = 300;

/** @internal */
export const TURN_LEASE: LeaseTable = {
  table: 'session_turn_leases',
  keyColumn: 'conversation_id',
};

export interface TurnLease {
  /** The lineage root the lease is keyed by (every id in the lineage maps to it). */
  readonly conversationId: string;
  readonly holder: string;
  /** Epoch seconds. */
  readonly acquiredAt: number;
  readonly expiresAt: number;
  /** Unexpired and its `pid=` holder alive: another caller cannot take it. */
  readonly active: boolean;
}

export interface TurnLeaseOptions {
  /** Defaults to a fresh `pid=<n> token=<hex>` holder. */
  readonly holder?: string;
  readonly ttlSeconds?: number;
}

/** One running turn per conversation: any id of a compression lineage maps to its root. */
function conversationIdOf(context: StoreContext, sessionId: string): string {
  const root = context
    .statement('SELECT lineage_root_id FROM sessions WHERE id = ?')
    .pluck()
    .get(sessionId) as string | undefined;
  if (root === undefined) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(sessionId),
    });
  }
  return root;
}

/** Call inside a write transaction. Returns the holder, or null while another live holder has it. */
export function acquireTurnLease(
  context: StoreContext,
  sessionId: string,
  options: TurnLeaseOptions = {},
): string | null {
  validateLeaseOptions(options);
  return acquireConversationTurnLease(context, conversationIdOf(context, sessionId), options);
}

/**
 * `acquireTurnLease` for a caller whose transaction already knows the conversation (the lineage
 * root): the session is not read again.
 */
export function acquireConversationTurnLease(
  context: StoreContext,
  conversationId: string,
  options: TurnLeaseOptions = {},
): string | null {
  validateLeaseOptions(options);
  return acquireLease(context, TURN_LEASE, {
    key: conversationId,
    ...(options.holder === undefined ? {} : { holder: options.holder }),
    ttlSeconds: options.ttlSeconds ?? TURN_LEASE_TTL_SECONDS,
  });
}

export function renewTurnLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
  options: { ttlSeconds?: number } = {},
): boolean {
  validateLeaseOptions({ holder, ...options });
  return renewLease(context, TURN_LEASE, {
    key: conversationIdOf(context, sessionId),
    holder,
    ttlSeconds: options.ttlSeconds ?? TURN_LEASE_TTL_SECONDS,
  });
}

export function releaseTurnLease(
  context: StoreContext,
  sessionId: string,
  holder: string,
): boolean {
  validateLeaseOptions({ holder });
  return releaseConversationTurnLease(context, conversationIdOf(context, sessionId), holder);
}

/** `releaseTurnLease` for a caller whose transaction already knows the conversation. */
export function releaseConversationTurnLease(
  context: StoreContext,
  conversationId: string,
  holder: string,
): boolean {
  validateLeaseOptions({ holder });
  return releaseLease(context, TURN_LEASE, conversationId, holder);
}

export function getTurnLease(context: StoreContext, sessionId: string): TurnLease | null {
  const lease = readLease(context, TURN_LEASE, conversationIdOf(context, sessionId));
  if (!lease) return null;
  return {
    conversationId: lease.key,
    holder: lease.holder,
    acquiredAt: lease.acquiredAt,
    expiresAt: lease.expiresAt,
    active: lease.active,
  };
}
