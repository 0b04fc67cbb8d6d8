import { debuglog } from 'node:util';
import type { Database } from 'better-sqlite3';
import {
  type AsyncDelegationRecord,
  claimCompletionDelivery,
  completeDelegationDelivery,
  type DelegationClaim,
  type DelegationRecovery,
  deferDelegationDelivery,
  dropDelegationDelivery,
  getDelegation,
  listLiveDelegations,
  pruneDelegations,
  type RecordDelegationStartInput,
  type RecordDelegationTerminalInput,
  recordDelegationStart,
  recordDelegationTerminal,
  recoverDelegations,
  releaseDelegationDelivery,
  type TransferDelegationOwnerInput,
  transferDelegationOwner,
} from './async-delegations.js';
import { BackgroundCheckpoint } from './background-checkpoint.js';
import { acquireCompressionLease, releaseCompressionLease } from './compression-lease.js';
import {
  type DeleteSessionOptions,
  refuseDeleteWhileTurnRuns,
  validateDeleteOptions,
} from './delete-guard.js';
import {
  type ClaimedObligation,
  type ClaimPendingOptions,
  claimPendingObligations,
  type DeliveryObligation,
  getObligation,
  markObligationAttempting,
  markObligationDelivered,
  markObligationFailed,
  type ObligationState,
  pruneObligations,
  type RecordObligationInput,
  recordObligation,
  releaseObligation,
} from './delivery-obligations.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import type { ForeignHolder } from './foreign-holders.js';
import { type ForkCommit, writeFork } from './fork-session.js';
import {
  isFtsStale,
  type MessageSearchResult,
  type SearchMessagesOptions,
  searchMessages,
} from './fts.js';
import { FtsIndexer } from './fts-indexer.js';
import { FtsMaintenance } from './fts-maintenance.js';
import { indexPendingBatch } from './fts-watermark.js';
import { findLatestGatewaySessionForPeer, type GatewayPeer } from './gateway-peer.js';
import {
  FTS_OPEN_CATCH_UP_BATCHES,
  type TitleSource,
  TRANSCRIPT_WRITE_PATIENCE_SECONDS,
} from './limits.js';
import {
  finalizeOrphanedCompressionSessions,
  findLiveCompressionChild,
  getCompressionChain,
  getCompressionTip,
  getLineageIds,
  type PublishCompressionInput,
  publishCompressionChild,
  reopenOrphanedCompressionSession,
  setLineageArchived,
  setLineageHidden,
  setLineagePinned,
  setLineageRead,
} from './lineage.js';
import {
  type ListSessionsOptions,
  listSessionsRich,
  type SessionListPage,
} from './list-sessions.js';
import {
  type GetMessagesOptions,
  getMessages,
  getRecentMessages,
  insertMessages,
  type MessageInput,
  type MessageRecord,
  type RecentMessagesOptions,
} from './messages.js';
import { normalizeStoreError, runCallerCallback } from './normalize-error.js';
import { type JournalMode, syncPragmas } from './open-database.js';
import { sessionPreview } from './preview.js';
import {
  applyResurrection,
  type CanonicalSessionOptions,
  type CanonicalSessionSummary,
  lookUpCanonicalSession,
  observeResurrection,
} from './resurrection.js';
import {
  type CreateSessionInput,
  deleteSession,
  endSession,
  getConversationGeneration,
  getSession,
  insertSession,
  promoteToSessionReset,
  reopenSession,
  type SessionRecord,
  setResumePending,
  type UpdateSessionInput,
  updateSession,
} from './sessions.js';
import { archiveStaleSessions } from './stale-archive.js';
import type { StoreContext } from './store-context.js';
import type { StoreSettings } from './store-settings.js';
import { StoreWriter } from './store-writer.js';
import {
  deleteStoredResponse,
  getStoredResponse,
  type StoredResponse,
  type StoreResponseInput,
  storeResponse,
  touchStoredResponse,
} from './stored-responses.js';
import { getNextTitleInLineage, resolveSessionByTitle } from './title-variants.js';
import { applyTitle, getSessionByTitle, type TitleLookupOptions } from './titles.js';
import {
  acquireTurnLease,
  getTurnLease,
  releaseTurnLease,
  renewTurnLease,
  type TurnLease,
  type TurnLeaseOptions,
} from './turn-lease.js';
import {
  type BeganTurn,
  type BeginTurnInput,
  beginTurn,
  type EndedTurn,
  type EndTurnInput,
  endTurn,
  readTranscriptMark,
  type TranscriptMark,
} from './turn-writes.js';
import {
  getSessionSystemPrompt,
  recordUsage,
  setSessionSystemPrompt,
  type UsageInput,
} from './usage.js';

const debug = debuglog('hermes-session-store');

/** One process's handle on a state.db. Reads are synchronous; writes are awaited (write patience). */
export class SessionStore {
  readonly #context: StoreContext;
  readonly #settings: StoreSettings;
  readonly #checkpointTimer: NodeJS.Timeout | undefined;
  readonly #writer: StoreWriter;
  /** WAL mode: the periodic checkpoints, run off the event loop. */
  readonly #background: BackgroundCheckpoint | undefined;
  #closed = false;
  /**
   * Transactions that may have changed a transcript other than by appending: a caller's own SQL
   * or a deleted session (see `TranscriptMark.foreignVersion`).
   */
  #transcriptResets = 0;
  readonly #fts: FtsMaintenance;
  /** Indexes committed messages into FTS after their commit, in batches. */
  readonly #indexer: FtsIndexer;
  /** The background FTS recovery started at open (resolves to the number of indexes rebuilt). */
  ftsRecovery: Promise<number> = Promise.resolve(0);

  /** @internal Use `openSessionStore`. */
  constructor(context: StoreContext, settings: StoreSettings, checkpointIntervalMs: number) {
    this.#context = context;
    this.#settings = settings;
    this.#writer = new StoreWriter({
      context,
      settings,
      assertOpen: () => this.#db(),
      checkpoint: () => this.#periodicCheckpoint(),
      afterCommit: () => {
        try {
          this.#indexer.afterCommit();
        } catch (error) {
          // Never the write's failure: the rows stay pending and are caught up later.
          debug(`FTS catch-up scheduling failed: ${(error as Error).message}`);
        }
      },
    });
    this.#indexer = new FtsIndexer({
      context,
      logger: settings.logger,
      attempt: (work) => this.#writer.attemptNow(work),
      isClosed: () => this.#closed,
    });
    this.#background =
      settings.journalMode === 'wal'
        ? new BackgroundCheckpoint({
            databasePath: settings.filePath,
            pragmas: syncPragmas(),
            checkpointHere: () => this.checkpoint(),
            logger: settings.logger,
          })
        : undefined;
    this.#fts = new FtsMaintenance({
      context,
      settings,
      write: (work) => this.#write(work),
      isClosed: () => this.#closed,
    });
    if (checkpointIntervalMs > 0) {
      this.#checkpointTimer = setInterval(() => this.#periodicCheckpoint(), checkpointIntervalMs);
      this.#checkpointTimer.unref();
    }
  }

  get path(): string {
    return this.#settings.filePath;
  }

  get journalMode(): JournalMode {
    return this.#settings.journalMode;
  }

  get schemaVersion(): number {
    return Number(this.#db().pragma('user_version', { simple: true }));
  }

  /** A synchronous read; whatever SQLite throws leaves as a `SessionStoreError`. */
  #read<T>(read: (context: StoreContext) => T): T {
    this.#db();
    try {
      return read(this.#context);
    } catch (error) {
      throw normalizeStoreError(error);
    }
  }

  #db(): Database {
    if (this.#closed)
      throw new SessionStoreError({ code: 'store_closed', message: ERROR_MESSAGES.storeClosed });
    return this.#context.db;
  }

  #write<T>(
    work: (context: StoreContext) => T,
    patienceSeconds = this.#settings.writePatienceSeconds,
  ): Promise<T> {
    return this.#writer.write(work, patienceSeconds);
  }

  /** Transcript writes get the longer transcript patience (60 s). */
  #writeTranscript<T>(work: (context: StoreContext) => T): Promise<T> {
    return this.#write(work, TRANSCRIPT_WRITE_PATIENCE_SECONDS);
  }

  /**
   * Runs `work` in one write transaction with the store's patience. For callers that must commit
   * their own rows atomically with the store's (for example an outbox row with a ledger update).
   */
  withWriteTransaction<T>(work: (database: Database) => T): Promise<T> {
    return this.#write((context) => {
      this.#transcriptResets += 1;
      return runCallerCallback(() => work(context.db));
    });
  }

  // Sessions ---------------------------------------------------------------------------------

  async createSession(input: CreateSessionInput): Promise<SessionRecord> {
    const id = await this.#write((context) => insertSession(context, input));
    return this.requireSession(id);
  }

  getSession(id: string): SessionRecord | undefined {
    return this.#read((context) => getSession(context, id));
  }

  /**
   * The preview the listing shows for this session (`listSessionsRich`): its first visible user
   * message, else its lineage root's (a compression child), shaped to 60 characters plus "...";
   * `null` when there is none or no such session.
   */
  getSessionPreview(id: string): string | null {
    return this.#read((context) => {
      const own = sessionPreview(context, id);
      if (own !== null) return own;
      const root = getSession(context, id)?.lineageRootId;
      return root === undefined || root === id ? null : sessionPreview(context, root);
    });
  }

  requireSession(id: string): SessionRecord {
    const row = this.getSession(id);
    if (!row)
      throw new SessionStoreError({
        code: 'session_not_found',
        message: ERROR_MESSAGES.sessionNotFound(id),
      });
    return row;
  }

  endSession(id: string, reason: string): Promise<boolean> {
    return this.#write((context) => endSession(context, id, reason));
  }

  reopenSession(id: string): Promise<boolean> {
    return this.#write((context) => reopenSession(context, id));
  }

  promoteToSessionReset(id: string): Promise<boolean> {
    return this.#write((context) => promoteToSessionReset(context, id));
  }

  /**
   * Deletes one session and its messages. Refused with `session_busy` (nothing deleted) while a
   * live turn lease covers its conversation, checked in the delete's transaction; see
   * `DeleteSessionOptions`.
   */
  deleteSession(id: string, options: DeleteSessionOptions = {}): Promise<boolean> {
    return this.#write((context) => {
      validateDeleteOptions(options);
      refuseDeleteWhileTurnRuns(context, id, options);
      this.#transcriptResets += 1;
      return deleteSession(context, id);
    });
  }

  /**
   * Deletes every session of `id`'s compression lineage (the whole conversation) with their
   * messages, in one transaction; returns the ids deleted (`[]` for an unknown id). Sessions
   * branched off it are kept and lose their parent, as with `deleteSession`. Refused with
   * `session_busy` (nothing deleted) while a live turn lease covers the conversation.
   */
  deleteLineage(id: string, options: DeleteSessionOptions = {}): Promise<string[]> {
    return this.#write((context) => {
      validateDeleteOptions(options);
      refuseDeleteWhileTurnRuns(context, id, options);
      this.#transcriptResets += 1;
      const ids = getLineageIds(context, id);
      // Newest first, so a compression child goes before its parent and is never re-rooted.
      for (const sessionId of [...ids].reverse()) deleteSession(context, sessionId);
      return ids;
    });
  }

  /**
   * @internal `forkSession`'s one transaction: the child, its system prompt and transcript, and
   * the parent's end, committed together or not at all.
   */
  async commitFork(fork: ForkCommit): Promise<SessionRecord> {
    const id = await this.#writeTranscript((context) => writeFork(context, fork));
    return this.requireSession(id);
  }

  /** How many times a session of this messaging peer has been ended (a fence for stale writers). */
  getConversationGeneration(source: string, sessionKey: string): number {
    return this.#read((context) => getConversationGeneration(context, source, sessionKey));
  }

  setResumePending(id: string, reason: string | null): Promise<boolean> {
    return this.#write((context) => setResumePending(context, id, reason));
  }

  /** Changes the model, working directory or model config; fields left out stay as they are. */
  async updateSession(id: string, input: UpdateSessionInput): Promise<SessionRecord> {
    await this.#write((context) => updateSession(context, id, input));
    return this.requireSession(id);
  }

  // Usage and model metadata -----------------------------------------------------------------

  /**
   * Adds one model call's usage to the session's counters atomically (one UPDATE, safe across
   * processes). Counts are non-negative integers; `model` / `billing*` replace the stored values;
   * `toolNames` is merged into the session's list. Returns the updated row.
   */
  async recordUsage(sessionId: string, usage: UsageInput): Promise<SessionRecord> {
    await this.#write((context) => recordUsage(context, sessionId, usage));
    return this.requireSession(sessionId);
  }

  /** Stores the session's system prompt (content-addressed: one copy per distinct text); null clears it. */
  async setSessionSystemPrompt(sessionId: string, prompt: string | null): Promise<void> {
    await this.#write((context) => setSessionSystemPrompt(context, sessionId, prompt));
  }

  getSessionSystemPrompt(sessionId: string): string | null {
    return this.#read((context) => getSessionSystemPrompt(context, sessionId));
  }

  // Turn lease -------------------------------------------------------------------------------

  /**
   * Takes the conversation's turn lease (one running turn per lineage; any id of a compression
   * lineage maps to its root). Succeeds when free, expired, or held by a dead `pid=` holder;
   * returns the holder, or null while another live holder has it.
   */
  acquireTurnLease(sessionId: string, options: TurnLeaseOptions = {}): Promise<string | null> {
    return this.#write((context) => acquireTurnLease(context, sessionId, options));
  }

  /** Extends a lease the holder still holds; false once it expired, was taken over or released. */
  renewTurnLease(
    sessionId: string,
    holder: string,
    options: { ttlSeconds?: number } = {},
  ): Promise<boolean> {
    return this.#write((context) => renewTurnLease(context, sessionId, holder, options));
  }

  releaseTurnLease(sessionId: string, holder: string): Promise<boolean> {
    return this.#write((context) => releaseTurnLease(context, sessionId, holder));
  }

  getTurnLease(sessionId: string): TurnLease | null {
    return this.#read((context) => getTurnLease(context, sessionId));
  }

  /**
   * A turn's opening writes in one transaction: creates the session with this id when `create`
   * is given (the id must be new: `session_exists` otherwise, nothing written), takes the turn
   * lease (as `acquireTurnLease`),
   * stores `systemPrompt` (as `setSessionSystemPrompt`; no write when it is already the stored
   * one; a session `create` makes is inserted with it) and appends `messages`. Returns null —
   * nothing written but a compression child `create` made, with its prompt — while another live
   * holder has the lease; otherwise the holder, the new message ids and the session's transcript mark as
   * committed. All of it commits, or none (a failed append does not leave the lease taken).
   */
  beginTurn(sessionId: string, input: BeginTurnInput = {}): Promise<BeganTurn | null> {
    return this.#writeTranscript((context) =>
      beginTurn(context, sessionId, input, this.#transcriptResets),
    );
  }

  /**
   * A turn's closing writes in one transaction: appends `messages`, adds `usage` (as
   * `recordUsage`) and releases the lease `releaseLease` holds (as `releaseTurnLease`). All of it
   * commits, or none: an invalid usage stores no message either.
   */
  endTurn(sessionId: string, input: EndTurnInput = {}): Promise<EndedTurn> {
    return this.#writeTranscript((context) => endTurn(context, sessionId, input));
  }

  /**
   * The session's newest active message id and the store's foreign-write version (see
   * `TranscriptMark`): an index probe and a pragma, a few µs whatever the transcript's length.
   */
  getTranscriptMark(sessionId: string): TranscriptMark {
    return this.#read((context) => readTranscriptMark(context, sessionId, this.#transcriptResets));
  }

  // Lineage ----------------------------------------------------------------------------------

  publishCompressionChild(input: PublishCompressionInput): Promise<string> {
    return this.#writeTranscript((context) => publishCompressionChild(context, input));
  }

  /** Takes the session's compression lease (free, expired, or held by a dead process); null when held. */
  acquireCompressionLease(
    sessionId: string,
    options: { holder?: string; ttlSeconds?: number } = {},
  ): Promise<string | null> {
    return this.#write((context) => acquireCompressionLease(context, { sessionId, ...options }));
  }

  releaseCompressionLease(sessionId: string, holder: string): Promise<boolean> {
    return this.#write((context) => releaseCompressionLease(context, sessionId, holder));
  }

  /** The session's one live compression child (undefined when none, or more than one). */
  findLiveCompressionChild(id: string): SessionRecord | undefined {
    return this.#read((context) => {
      const child = findLiveCompressionChild(context, id);
      return child === undefined ? undefined : getSession(context, child);
    });
  }

  /** Reopens a compression-ended session whose child never materialised (or was deleted). */
  reopenOrphanedCompressionSession(id: string): Promise<boolean> {
    return this.#write((context) => reopenOrphanedCompressionSession(context, id));
  }

  /** Stamps `orphaned_compression` on sessions compression-ended with no child for 7 days. */
  finalizeOrphanedCompressionSessions(
    options: { olderThanSeconds?: number } = {},
  ): Promise<number> {
    return this.#write((context) => finalizeOrphanedCompressionSessions(context, options));
  }

  getCompressionChain(id: string): string[] {
    return this.#read((context) => getCompressionChain(context, id));
  }

  getCompressionTip(id: string): string {
    return this.#read((context) => getCompressionTip(context, id));
  }

  getLineageIds(id: string): string[] {
    return this.#read((context) => getLineageIds(context, id));
  }

  setArchived(
    id: string,
    archived: boolean,
    options: { automatic?: boolean } = {},
  ): Promise<number> {
    return this.#write((context) => setLineageArchived(context, id, archived, options));
  }

  setHidden(id: string, hidden: boolean): Promise<number> {
    return this.#write((context) => setLineageHidden(context, id, hidden));
  }

  setPinned(id: string, pinned: boolean): Promise<number> {
    return this.#write((context) => setLineagePinned(context, id, pinned));
  }

  setRead(id: string, read: boolean): Promise<number> {
    return this.#write((context) => setLineageRead(context, id, read));
  }

  /**
   * Brings back an archived chat that machinery ended by accident (judged at its compression
   * tip). Decided on a read, then one compare-and-swap write on the observed tip state: a
   * boundary that another process lands in between (`session_reset`) wins, and the chat stays
   * archived. Deliberate archives stay archived; nothing to do takes no write lock.
   */
  async unarchiveRecoverableSession(id: string): Promise<boolean> {
    const observed = this.#read((context) => observeResurrection(context, id));
    if (!observed) return false;
    return this.#write((context) => applyResurrection(context, observed));
  }

  /**
   * The profile's canonical Bot Chat (profiles listing), idempotent and read-only unless a reaped
   * canonical chat must be resurrected: only then is the write lock taken (once).
   */
  async canonicalSession(
    options: CanonicalSessionOptions = {},
  ): Promise<CanonicalSessionSummary | null> {
    const first = this.#read((context) => lookUpCanonicalSession(context, options));
    if (first.kind !== 'resurrect') return first.kind === 'found' ? first.summary : null;
    await this.#write((context) => applyResurrection(context, first.observed));
    // Whether this call or a concurrent one brought it back, or a boundary won: look again.
    const second = this.#read((context) => lookUpCanonicalSession(context, options));
    return second.kind === 'found' ? second.summary : null;
  }

  // Titles -----------------------------------------------------------------------------------

  /** Returns false when an automatic title source was outranked (a silent no-op). */
  setTitle(
    id: string,
    title: string | null,
    options: { source?: TitleSource } = {},
  ): Promise<boolean> {
    return this.#write((context) =>
      applyTitle(context, { sessionId: id, title, source: options.source ?? 'user' }),
    );
  }

  getSessionByTitle(title: string, options: TitleLookupOptions = {}): SessionRecord | undefined {
    return this.#read((context) => getSessionByTitle(context, title, options));
  }

  /** Latest numbered continuation (`<t> #N`) or the exact title; `Bot Chat` resolves exactly. */
  resolveSessionByTitle(title: string): SessionRecord | undefined {
    return this.#read((context) => resolveSessionByTitle(context, title));
  }

  getNextTitleInLineage(title: string): string {
    return this.#read((context) => getNextTitleInLineage(context, title));
  }

  // Lookups and messages ---------------------------------------------------------------------

  findLatestGatewaySessionForPeer(peer: GatewayPeer): SessionRecord | undefined {
    return this.#read((context) => findLatestGatewaySessionForPeer(context, peer));
  }

  listSessionsRich(options: ListSessionsOptions = {}): SessionListPage {
    return this.#read((context) => listSessionsRich(context, options));
  }

  async appendMessage(sessionId: string, message: MessageInput): Promise<number> {
    const [id] = await this.appendMessages(sessionId, [message]);
    return id ?? 0;
  }

  appendMessages(sessionId: string, messages: readonly MessageInput[]): Promise<number[]> {
    return this.#writeTranscript((context) => insertMessages(context, sessionId, messages));
  }

  getMessages(sessionId: string, options: GetMessagesOptions = {}): MessageRecord[] {
    return this.#read((context) => getMessages(context, sessionId, options));
  }

  /**
   * The newest `limit` (default 10) user and assistant messages with text of the conversation
   * `sessionId` belongs to, oldest first, read backwards from its compression tip (`/review`'s
   * snapshot). Costs what it returns, not the length of the transcript.
   */
  getRecentMessages(sessionId: string, options: RecentMessagesOptions = {}): MessageRecord[] {
    return this.#read((context) => getRecentMessages(context, sessionId, options));
  }

  // Stored responses -------------------------------------------------------------------------

  /**
   * Stores (or replaces) a `/v1/responses` object and where its turn ended; the table keeps the
   * `MAX_STORED_RESPONSES` (100) most recently stored or used, pruned in the same transaction.
   */
  async storeResponse(input: StoreResponseInput): Promise<StoredResponse> {
    await this.#write((context) => storeResponse(context, input));
    const stored = this.getStoredResponse(input.responseId);
    if (!stored) {
      throw new SessionStoreError({
        code: 'database_error',
        message: `Stored response ${input.responseId} was not found after storing it`,
      });
    }
    return stored;
  }

  getStoredResponse(responseId: string): StoredResponse | undefined {
    return this.#read((context) => getStoredResponse(context, responseId));
  }

  /** Marks a stored response used (a request chained from it) so pruning keeps it longest. */
  touchStoredResponse(responseId: string): Promise<boolean> {
    return this.#write((context) => touchStoredResponse(context, responseId));
  }

  deleteStoredResponse(responseId: string): Promise<boolean> {
    return this.#write((context) => deleteStoredResponse(context, responseId));
  }

  /**
   * A token that changes whenever a commit may have changed the database — this store's own
   * writes and those of any other connection or process (SQLite's `data_version`). Cache a
   * result (a rendered listing, an ETag) under it and reuse it while the token is unchanged.
   * One pragma: a few microseconds.
   */
  contentVersion(): string {
    return this.#read(
      (context) =>
        `${context.statement('PRAGMA data_version').pluck().get() as number}.${this.#writer.commits}`,
    );
  }

  // Full-text search -------------------------------------------------------------------------

  /** Other processes holding this database or its WAL open (fail closed: a sentinel on doubt). */
  findForeignHolders(): Promise<ForeignHolder[]> {
    return this.#fts.findForeignHolders();
  }

  /**
   * Rebuilds the FTS index in a worker thread. Returns 1 when rebuilt and 0 when deferred:
   * another process holds the database (a rebuild would lock it out for the duration) or the
   * rebuild lock is busy. A failed rebuild leaves the index detached and stale, and throws.
   */
  rebuildFts(): Promise<number> {
    this.#db();
    return this.#fts.rebuild();
  }

  /** Deferred recovery for housekeeping loops: only when stale, at most once per cooldown (300 s). */
  retryDeferredFtsRecovery(): Promise<number> {
    this.#db();
    return this.#fts.retryDeferred();
  }

  /** @internal Started by `openSessionStore` when the index is stale. */
  startFtsRecovery(): void {
    this.ftsRecovery = this.rebuildFts().catch((error: unknown) => {
      this.#settings.logger.warn(`FTS recovery failed: ${(error as Error).message}`);
      return 0;
    });
  }

  /**
   * @internal Called by `openSessionStore` when the index is attached: indexes rows a crashed
   * process left pending (at most `FTS_OPEN_CATCH_UP_BATCHES` batches; the timer takes the rest).
   * Never throws: rows it cannot index now stay pending, and search still finds them.
   */
  async catchUpFtsAtOpen(): Promise<void> {
    try {
      for (let batch = 0; batch < FTS_OPEN_CATCH_UP_BATCHES; batch += 1) {
        if (this.#indexer.pending() === 0) return;
        if ((await this.#write((context) => indexPendingBatch(context))) !== 'pending') return;
      }
    } catch (error) {
      this.#settings.logger.warn(`FTS catch-up at open failed: ${(error as Error).message}`);
    }
  }

  /**
   * Exact: messages committed a moment ago (by any process) are found. Rows not indexed yet are
   * indexed first (one write attempt); when that cannot happen now (another process holds the
   * write lock), they are searched with the same MATCH in a temporary index of this connection
   * and merged in, newest first.
   */
  searchMessages(query: string, options: SearchMessagesOptions = {}): MessageSearchResult {
    return this.#read((context) => {
      this.#indexer.catchUpIfPending();
      return searchMessages(context, query, options);
    });
  }

  isFtsStale(): boolean {
    return this.#read((context) => isFtsStale(context));
  }

  // Delivery obligations ---------------------------------------------------------------------

  recordObligation(
    input: RecordObligationInput,
  ): Promise<{ obligationId: string; created: boolean }> {
    return this.#write((context) => recordObligation(context, input));
  }

  getObligation(obligationId: string): DeliveryObligation | undefined {
    return this.#read((context) => getObligation(context, obligationId));
  }

  claimPendingObligations(options: ClaimPendingOptions = {}): Promise<ClaimedObligation[]> {
    return this.#write((context) => claimPendingObligations(context, options));
  }

  /**
   * Call (and await) right before each send of an obligation this process owns: the attempt is
   * on record before the reply can reach the chat, so a crash mid-send makes the next start
   * resend it with `RECOVERED_MARKER`. Counts the attempt once (not again for a row claimed at
   * startup); false when the row is not this process's to send (unknown, settled, or owned by
   * another process) — then do not send it.
   */
  beginObligationAttempt(obligationId: string): Promise<boolean> {
    return this.#write((context) => markObligationAttempting(context, obligationId));
  }

  /**
   * Marks an obligation delivered. `alongside` runs in the same transaction (an outbox row, a
   * platform receipt) so the completion and the caller's record commit together or not at all.
   */
  completeObligation(
    obligationId: string,
    options: { alongside?: (database: Database) => void } = {},
  ): Promise<boolean> {
    return this.#write((context) => {
      const marked = markObligationDelivered(context, obligationId);
      const alongside = options.alongside;
      if (marked && alongside) {
        this.#transcriptResets += 1;
        runCallerCallback(() => alongside(context.db));
      }
      return marked;
    });
  }

  failObligation(obligationId: string, error: string): Promise<ObligationState | null> {
    return this.#write((context) => markObligationFailed(context, obligationId, error));
  }

  releaseObligation(obligationId: string): Promise<boolean> {
    return this.#write((context) => releaseObligation(context, obligationId));
  }

  pruneObligations(): Promise<number> {
    return this.#write((context) => pruneObligations(context));
  }

  // Async delegations ------------------------------------------------------------------------

  recordDelegationStart(input: RecordDelegationStartInput): Promise<void> {
    return this.#write((context) => recordDelegationStart(context, input));
  }

  recordDelegationTerminal(input: RecordDelegationTerminalInput): Promise<boolean> {
    return this.#write((context) => recordDelegationTerminal(context, input));
  }

  /** Hands a live row to another owner, by compare-and-swap on the current one. */
  transferDelegationOwner(input: TransferDelegationOwnerInput): Promise<boolean> {
    return this.#write((context) => transferDelegationOwner(context, input));
  }

  /** Rows still running (live states), oldest first. */
  listLiveDelegations(): AsyncDelegationRecord[] {
    return this.#read((context) => listLiveDelegations(context));
  }

  getDelegation(delegationId: string): AsyncDelegationRecord | undefined {
    return this.#read((context) => getDelegation(context, delegationId));
  }

  claimCompletionDelivery(delegationId?: string): Promise<DelegationClaim | null> {
    return this.#write((context) => claimCompletionDelivery(context, delegationId));
  }

  completeDelegationDelivery(delegationId: string): Promise<boolean> {
    return this.#write((context) => completeDelegationDelivery(context, delegationId));
  }

  releaseDelegationDelivery(delegationId: string): Promise<boolean> {
    return this.#write((context) => releaseDelegationDelivery(context, delegationId));
  }

  deferDelegationDelivery(delegationId: string, delaySeconds: number): Promise<boolean> {
    return this.#write((context) => deferDelegationDelivery(context, delegationId, delaySeconds));
  }

  dropDelegationDelivery(delegationId: string): Promise<boolean> {
    return this.#write((context) => dropDelegationDelivery(context, delegationId));
  }

  recoverDelegations(
    options: { isOwnerAlive?: (owner: { pid: number; startTicks: string | null }) => boolean } = {},
  ): Promise<DelegationRecovery> {
    return this.#write((context) => recoverDelegations(context, options));
  }

  pruneDelegations(): Promise<number> {
    return this.#write((context) => pruneDelegations(context));
  }

  // Maintenance ------------------------------------------------------------------------------

  /** Auto-archives idle lineages (default 30 days), sparing pinned ones and the hidden Bot Chat. */
  archiveStaleSessions(options: { olderThanSeconds?: number } = {}): Promise<number> {
    return this.#write((context) => archiveStaleSessions(context, options));
  }

  /** Every 50 writes and on the timer: on the background thread in WAL mode. */
  #periodicCheckpoint(): void {
    if (this.#closed) return;
    if (!this.#background) {
      this.checkpoint();
      return;
    }
    this.#writer.checkpointed();
    this.#background.request();
  }

  /**
   * A PASSIVE checkpoint on this thread, now (the periodic ones run off the event loop). PASSIVE
   * only: TRUNCATE would block or break other attached processes.
   */
  checkpoint(): void {
    if (this.#closed) return;
    this.#writer.checkpointed();
    try {
      this.#context.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      debug(`passive checkpoint failed: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#checkpointTimer) clearInterval(this.#checkpointTimer);
    await this.ftsRecovery.catch(() => 0);
    await this.#fts.inProgress?.catch(() => 0);
    // Leave the index complete for the next reader (one attempt a batch; what is left stays
    // pending and is caught up by the next process that writes, searches or opens).
    this.#indexer.stop();
    try {
      this.#indexer.catchUpIfPending(FTS_OPEN_CATCH_UP_BATCHES);
    } catch (error) {
      debug(`FTS catch-up at close failed: ${(error as Error).message}`);
    }
    // The worker's connection closes first, so this one is the last and SQLite removes the WAL.
    await this.#background?.close();
    this.checkpoint();
    this.#closed = true;
    this.#context.db.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
