export {
  type AsyncDelegationRecord,
  DELEGATION_DELIVERY_STATE,
  DELEGATION_OWNER_EXITED_MESSAGE,
  DELEGATION_UNKNOWN_STATE,
  type DelegationClaim,
  type DelegationRecovery,
  LIVE_DELEGATION_STATES,
  RELEASED_DELEGATION_OWNER,
  type RecordDelegationStartInput,
  type RecordDelegationTerminalInput,
  type TransferDelegationOwnerInput,
} from './async-delegations.js';
export * from './bot-relay.js';
export {
  type CheckStateDbIntegrityOptions,
  checkStateDbIntegrity,
  type StateDbIntegrity,
} from './check-integrity.js';
export { type Clock, type Sleep, systemClock } from './clock.js';
export { COMPRESSION_LEASE_TTL_SECONDS, newLeaseHolder } from './compression-lease.js';
export type { DeleteSessionOptions } from './delete-guard.js';
export {
  type ClaimedObligation,
  type ClaimPendingOptions,
  type DeliveryObligation,
  FLOOD_CONTROL_CAP_SECONDS,
  FLOOD_CONTROL_DEFAULT_SECONDS,
  FLOOD_CONTROL_SLACK_SECONDS,
  OBLIGATION_STATE,
  type ObligationState,
  obligationIdFor,
  RECOVERED_MARKER,
  type RecordObligationInput,
} from './delivery-obligations.js';
export * from './end-reasons.js';
export { ERROR_MESSAGES, SessionStoreError, type SessionStoreErrorCode } from './errors.js';
export {
  type ForeignHolder,
  type ForeignHolderScanner,
  type ForeignHolderScanOptions,
  scanForeignHolders,
} from './foreign-holders.js';
export {
  type ForkSessionInput,
  type ForkSessionResult,
  forkSession,
  messageInputFromRecord,
  readAllMessages,
} from './fork-session.js';
export type { MessageSearchHit, MessageSearchResult, SearchMessagesOptions } from './fts.js';
export type { GatewayPeer } from './gateway-peer.js';
export * from './limits.js';
export { ORPHANED_COMPRESSION_FINALIZE_SECONDS, type PublishCompressionInput } from './lineage.js';
export type { ListSessionsOptions, SessionListItem, SessionListPage } from './list-sessions.js';
export {
  type GetMessagesOptions,
  type MessageInput,
  type MessageRecord,
  type MessageRole,
  RECENT_MESSAGES_DEFAULT_LIMIT,
  type RecentMessagesOptions,
} from './messages.js';
export { MIGRATIONS_FOLDER } from './migrations.js';
export type { JournalMode } from './open-database.js';
export { type OpenSessionStoreOptions, openSessionStore } from './open-session-store.js';
export { shapePreview } from './preview.js';
export {
  currentProcessIdentity,
  isProcessAlive,
  type ProcessIdentity,
} from './process-identity.js';
export type { CanonicalSessionOptions, CanonicalSessionSummary } from './resurrection.js';
export type { SearchSyntax } from './search-query.js';
export { SessionStore } from './session-store.js';
export type {
  CreateSessionInput,
  ParentEdge,
  SessionRecord,
  UpdateSessionInput,
} from './sessions.js';
export type { SessionStoreLogger } from './store-settings.js';
export type { StoredResponse, StoreResponseInput } from './stored-responses.js';
export { sanitizeTitle } from './titles.js';
export {
  COMPACTION_INTERNAL_FIELDS,
  COMPACTION_SUMMARY_PREFIXES,
  classifyMessage,
  DISPLAY_KIND,
  type MessageClass,
  type MessageResponse,
  messageResponse,
  PLACEHOLDER_DISPLAY_KINDS,
  type ProjectableMessage,
  type TurnTranscriptInput,
  turnTranscriptMessages,
} from './transcript-projection.js';
export { TURN_LEASE_TTL_SECONDS, type TurnLease, type TurnLeaseOptions } from './turn-lease.js';
export type {
  BeganTurn,
  BeginTurnInput,
  EndedTurn,
  EndTurnInput,
  TranscriptMark,
} from './turn-writes.js';
export { systemPromptHash, type UsageInput } from './usage.js';
