import {
  type ArtifactReferenceValidator,
  validateArtifactReference,
} from './artifact-validation.js';
import { AsyncMutex } from './async-mutex.js';
import { isArtifactCapability, isDeveloperCapability } from './capabilities.js';
import type { MonotonicClock } from './clock.js';
import {
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  DEFERRED_CANCEL_FLUSH_FAILED_MESSAGE,
  FRAME_COMMAND,
  MAX_DEFERRED_CANCELS,
} from './constants.js';
import {
  BrowserControllerConnectionError,
  ControllerCancelled,
  ControllerRejected,
  ControllerTimeout,
  ControllerUnavailable,
} from './errors.js';
import { type ExtensionControlFlagSource, liveExtensionControlFlags, readFlags } from './flags.js';
import type { BrowserControlFrame, ControllerSend } from './frames.js';
import {
  cancelFrame,
  createPendingCommand,
  type DeadlineScheduler,
  defaultDeadline,
  mintCommandId,
  type PendingCommand,
  renderPayload,
  waitForOutcome,
} from './pending-command.js';
import {
  type ControllerScope,
  identityKey,
  replacementLaneKey,
  sameIdentity,
  sameScope,
  scopeKey,
  toImmutableScope,
} from './scope.js';
import { type Ticket, TicketBook } from './ticket-book.js';
import type { TurnTarget } from './turn-target.js';

export interface BrowserControlBrokerOptions {
  readonly ticketTtlSeconds?: number;
  readonly commandTimeoutSeconds?: number;
  /** Monotonic seconds for ticket expiry (default `performance.now() / 1000`). */
  readonly clock?: MonotonicClock;
  /** A boolean pins the developer-mode gate; unset consults `flags` on every selection. */
  readonly developerMode?: boolean;
  /** Live flag source (default: the current home's config.yaml). */
  readonly flags?: ExtensionControlFlagSource;
  readonly scheduleDeadline?: DeadlineScheduler;
  /** Where non-fatal transport trouble is reported (default: nowhere). */
  readonly onWarning?: (message: string, error?: unknown) => void;
}

export interface DispatchRequest {
  readonly scope: ControllerScope;
  readonly action: string;
  readonly arguments?: Readonly<Record<string, unknown>> | undefined;
  readonly toolCallId?: string | null | undefined;
}

export interface CompletionInput {
  /** Success only when literally `true`. */
  readonly ok: unknown;
  readonly result?: unknown;
  /** When given, must equal the command's current scope on all seven fields. */
  readonly scope?: ControllerScope | undefined;
}

/** Lane lookup key used by the agent: profile is deliberately not part of it. */
export interface SessionLaneQuery {
  readonly sessionId?: string | null | undefined;
  readonly taskId?: string | null | undefined;
  readonly principalId?: string | null | undefined;
  readonly transportFamily?: string | null | undefined;
}

interface ControllerRecord {
  scope: ControllerScope;
  send: ControllerSend;
  owner: object | null;
  connected: boolean;
  deferredCancels: BrowserControlFrame[];
  readonly mutex: AsyncMutex;
}

function describeScope(scope: ControllerScope): string {
  return identityKey(scope);
}

function trimmed(value: string | null | undefined): string {
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * Binds identity-scoped controllers (the party that drives a browser) to callers (the agent's
 * browser tools). Transport-neutral: a transport hands `attach` a `send` callback and an opaque
 * owner object. Every state change is one synchronous section (no `await` between a check and the
 * mutation it guards); the per-controller FIFO mutex orders sends, so a command can never overtake
 * its cancel and no command is admitted before deferred cancels are flushed.
 */
export class BrowserControlBroker {
  readonly commandTimeoutSeconds: number;
  readonly #tickets: TicketBook;
  readonly #controllers = new Map<string, ControllerRecord>();
  readonly #pending = new Map<string, PendingCommand>();
  readonly #artifactStores = new Map<string, ArtifactReferenceValidator>();
  readonly #turnTargets = new Map<string, TurnTarget>();
  readonly #developerModePin: boolean | undefined;
  readonly #flags: ExtensionControlFlagSource;
  readonly #scheduleDeadline: DeadlineScheduler;
  readonly #warn: (message: string, error?: unknown) => void;

  constructor(options: BrowserControlBrokerOptions = {}) {
    this.#tickets = new TicketBook({
      ...(options.ticketTtlSeconds === undefined ? {} : { ttlSeconds: options.ticketTtlSeconds }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    this.commandTimeoutSeconds = options.commandTimeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS;
    this.#developerModePin = options.developerMode;
    this.#flags = options.flags ?? liveExtensionControlFlags;
    this.#scheduleDeadline = options.scheduleDeadline ?? defaultDeadline;
    this.#warn = options.onWarning ?? (() => {});
  }

  get ticketTtlSeconds(): number {
    return this.#tickets.ttlSeconds;
  }

  /** Commands awaiting a terminal outcome (diagnostics). */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The developer-mode gate as selection sees it right now (pin, else live config). */
  developerModeEnabled(): boolean {
    if (this.#developerModePin !== undefined) return this.#developerModePin;
    return readFlags(this.#flags).developerMode;
  }

  // ---- tickets -------------------------------------------------------------------------------

  mintTicket(scope: ControllerScope): Ticket {
    return this.#tickets.mint(toImmutableScope(scope));
  }

  consumeTicket(value: string): ControllerScope {
    return this.#tickets.consume(value);
  }

  // ---- lookup --------------------------------------------------------------------------------

  #findByIdentity(scope: ControllerScope): ControllerRecord | undefined {
    const key = identityKey(scope);
    for (const record of this.#controllers.values()) {
      if (identityKey(record.scope) === key) return record;
    }
    return undefined;
  }

  #isRegistered(record: ControllerRecord): boolean {
    return this.#controllers.get(scopeKey(record.scope)) === record;
  }

  #select(scope: ControllerScope, capability: string): ControllerRecord | undefined {
    if (isDeveloperCapability(capability) && !this.developerModeEnabled()) return undefined;
    const record = this.#findByIdentity(scope);
    if (!record?.connected) return undefined;
    // The controller's CURRENT negotiated set decides, never the caller's copy of the scope.
    return record.scope.capabilities.has(capability) ? record : undefined;
  }

  /** The connected controller's current scope when it may run `capability`, else `null`. */
  select(scope: ControllerScope, capability: string): ControllerScope | null {
    return this.#select(scope, capability)?.scope ?? null;
  }

  /** True only when the identity's controller is connected and owned by this very object. */
  isOwner(scope: ControllerScope, owner: object | null | undefined): boolean {
    if (owner === null || owner === undefined) return false;
    const record = this.#findByIdentity(scope);
    return record?.connected === true && record.owner === owner;
  }

  #laneMatches(query: SessionLaneQuery): ControllerScope[] {
    const session = trimmed(query.sessionId) || trimmed(query.taskId);
    const principal = trimmed(query.principalId);
    const family = trimmed(query.transportFamily);
    if (session === '' || principal === '' || family === '') return [];
    const matches: ControllerScope[] = [];
    for (const record of this.#controllers.values()) {
      const { scope } = record;
      if (
        trimmed(scope.sessionId) === session &&
        trimmed(scope.principalId) === principal &&
        trimmed(scope.transportFamily) === family
      ) {
        matches.push(scope);
      }
    }
    return matches;
  }

  /** The lane's one attached scope (online or not); none or several → `null` (fail closed). */
  scopeForSession(query: SessionLaneQuery): ControllerScope | null {
    const matches = this.#laneMatches(query);
    return matches.length === 1 ? (matches[0] ?? null) : null;
  }

  /** True once any controller, even offline, is registered for the lane. */
  laneRegistered(query: SessionLaneQuery): boolean {
    return this.#laneMatches(query).length > 0;
  }

  // ---- attach / disconnect / detach ----------------------------------------------------------

  /**
   * Attaches a controller. A new identity is inserted; other identities in the same
   * (principal, profile, session, family) lane are hard-replaced first; the same identity is a
   * reconnect that swaps transport and capabilities, keeps pending work, and flushes deferred
   * cancels through the new transport before the controller is admitted again.
   */
  async attach(input: ControllerScope, send: ControllerSend, owner: object | null = null) {
    // What the broker keeps, and hands out from select()/scopeForSession(), must not change under
    // it: a caller's own object is copied into an immutable scope first.
    const scope = toImmutableScope(input);
    for (;;) {
      const same = this.#findByIdentity(scope);
      const lane = replacementLaneKey(scope);
      const siblings = [...this.#controllers.values()].filter(
        (record) => replacementLaneKey(record.scope) === lane && !sameIdentity(record.scope, scope),
      );
      if (!same && siblings.length === 0) {
        this.#controllers.set(scopeKey(scope), {
          scope,
          send,
          owner,
          connected: true,
          deferredCancels: [],
          mutex: new AsyncMutex(),
        });
        return;
      }
      if (siblings.length > 0) {
        // Terminal for the old identity; its peer is not told (it is being replaced).
        for (const sibling of siblings) await this.#detachRecord(sibling, { notify: false });
        continue;
      }
      if (same && (await this.#refresh(same, { scope, send, owner }))) return;
    }
  }

  /** Same-identity reconnect. Returns false when the record changed under us (caller loops). */
  async #refresh(
    record: ControllerRecord,
    next: { scope: ControllerScope; send: ControllerSend; owner: object | null },
  ): Promise<boolean> {
    const release = await record.mutex.lock();
    try {
      if (!this.#isRegistered(record)) return false;
      this.#controllers.delete(scopeKey(record.scope));
      record.scope = next.scope;
      record.send = next.send;
      record.owner = next.owner;
      record.connected = false;
      for (const pending of this.#pending.values()) {
        if (sameIdentity(pending.scope, next.scope)) pending.scope = next.scope;
      }
      const deferred = record.deferredCancels;
      record.deferredCancels = [];
      this.#controllers.set(scopeKey(next.scope), record);
      for (let index = 0; index < deferred.length; index += 1) {
        try {
          await next.send(deferred[index] as BrowserControlFrame);
        } catch (error) {
          // Keep the unsent tail for the next attach; the controller stays offline.
          record.deferredCancels = [...deferred.slice(index), ...record.deferredCancels].slice(
            -MAX_DEFERRED_CANCELS,
          );
          throw new BrowserControllerConnectionError(DEFERRED_CANCEL_FLUSH_FAILED_MESSAGE, {
            cause: error,
          });
        }
      }
      record.connected = true;
      return true;
    } finally {
      release();
    }
  }

  /**
   * Recoverable transport loss: the controller goes offline, pending work lives until each
   * command's own deadline. With an `owner`, only that owner's generation is parked.
   */
  async disconnect(scope: ControllerScope, owner?: object | null): Promise<boolean> {
    const record = this.#findByIdentity(scope);
    if (!record) return false;
    const release = await record.mutex.lock();
    try {
      if (!this.#isRegistered(record)) return false;
      if (owner !== undefined && record.owner !== owner) return false;
      record.connected = false;
      record.owner = null;
      return true;
    } finally {
      release();
    }
  }

  /** Disconnects every controller owned by `owner`; returns how many. */
  async disconnectOwner(owner: object): Promise<number> {
    let count = 0;
    for (const record of [...this.#controllers.values()]) {
      if (record.owner === owner && (await this.disconnect(record.scope, owner))) count += 1;
    }
    return count;
  }

  /**
   * Terminal detach of the controller registered under exactly `scope` (all seven fields).
   * Pending work of that identity fails as cancelled; with `notifyController` one cancel frame per
   * command is written under the old generation's mutex, so no command can overtake its cancel.
   */
  async detach(
    scope: ControllerScope,
    options: { owner?: object | null; notifyController?: boolean } = {},
  ): Promise<boolean> {
    const record = this.#controllers.get(scopeKey(scope));
    if (!record) return false;
    if (options.owner !== undefined && record.owner !== options.owner) return false;
    return this.#detachRecord(record, {
      notify: options.notifyController ?? true,
      ...(options.owner === undefined ? {} : { owner: options.owner }),
    });
  }

  /** Detaches every controller of `owner`; returns how many. */
  async detachOwner(owner: object, options: { notifyController?: boolean } = {}): Promise<number> {
    let count = 0;
    for (const record of [...this.#controllers.values()]) {
      if (record.owner !== owner) continue;
      const detached = await this.#detachRecord(record, {
        notify: options.notifyController ?? true,
        owner,
      });
      if (detached) count += 1;
    }
    return count;
  }

  async #detachRecord(
    record: ControllerRecord,
    options: { notify: boolean; owner?: object | null },
  ): Promise<boolean> {
    const release = await record.mutex.lock();
    try {
      if (!this.#isRegistered(record)) return false;
      if (options.owner !== undefined && record.owner !== options.owner) return false;
      this.#controllers.delete(scopeKey(record.scope));
      const cancelled = this.#cancelIdentity(record.scope);
      if (options.notify) {
        for (const pending of cancelled) {
          try {
            await record.send(cancelFrame(pending));
          } catch (error) {
            this.#warn('could not write a cancel frame to a detached controller', error);
          }
        }
      }
      return true;
    } finally {
      release();
    }
  }

  #cancelIdentity(scope: ControllerScope): PendingCommand[] {
    const cancelled: PendingCommand[] = [];
    for (const pending of [...this.#pending.values()]) {
      if (!pending.done && sameIdentity(pending.scope, scope)) {
        this.#settleCancelled(pending);
        cancelled.push(pending);
      }
    }
    return cancelled;
  }

  #settleCancelled(pending: PendingCommand): void {
    pending.done = true;
    pending.cancelled = true;
    this.#pending.delete(pending.commandId);
    pending.signal();
  }

  /** Detaches everything (notifying), forgets all tickets, fails any leftover command. */
  async reset(): Promise<void> {
    for (const record of [...this.#controllers.values()]) {
      await this.#detachRecord(record, { notify: true });
    }
    this.#tickets.clear();
    this.#turnTargets.clear();
    for (const pending of [...this.#pending.values()]) this.#settleCancelled(pending);
  }

  // ---- dispatch ------------------------------------------------------------------------------

  /**
   * Sends one command to the scope's controller and waits for its terminal outcome (up to the
   * command timeout). Throws `ControllerUnavailable`, `ControllerCancelled`, `ControllerTimeout`,
   * `ControllerRejected`, or the transport's own error when the send itself failed.
   */
  async dispatch(request: DispatchRequest): Promise<unknown> {
    const { scope, action } = request;
    const record = this.#select(scope, action);
    if (!record) {
      throw new ControllerUnavailable(
        `no controller for scope ${describeScope(scope)} with capability ${action}`,
      );
    }
    const args: Record<string, unknown> = { ...(request.arguments ?? {}) };
    if (isArtifactCapability(action)) {
      args.artifact_id = await validateArtifactReference({
        action,
        arguments: args,
        scope,
        store: this.#artifactStoreFor(scope),
      });
    }
    const commandId = mintCommandId();
    const toolCallId = request.toolCallId ?? null;
    const params: Record<string, unknown> = {
      command_id: commandId,
      action,
      arguments: Object.freeze(args),
      controller_id: scope.controllerId ?? null,
      browser_profile_id: scope.browserProfileId ?? null,
      tool_call_id: toolCallId,
    };
    const target = scope.sessionId ? this.#turnTargets.get(scope.sessionId) : undefined;
    if (target && target.controllerId === scope.controllerId) {
      params.tab_id = target.tabId;
      params.frame_id = target.frameId;
    }
    const frame: BrowserControlFrame = { method: FRAME_COMMAND, params };

    let pending: PendingCommand;
    const release = await record.mutex.lock();
    try {
      if (this.#findByIdentity(scope) !== record || !record.connected) {
        throw new ControllerUnavailable(
          `controller for scope ${describeScope(scope)} detached before dispatch`,
        );
      }
      pending = this.#register(record.scope, commandId, toolCallId);
      try {
        await record.send(frame);
      } catch (error) {
        // The command never left the building: release its id and surface the transport error.
        if (this.#pending.get(commandId) === pending) this.#pending.delete(commandId);
        throw error;
      }
    } finally {
      release();
    }

    const timedOut = await this.#wait(pending);
    if (timedOut) {
      await this.#cancelAfterTimeout(record, scope, pending);
      throw new ControllerTimeout(
        `controller did not complete command ${commandId} within ${this.commandTimeoutSeconds}s`,
      );
    }
    if (pending.cancelled)
      throw new ControllerCancelled(`controller command ${commandId} was cancelled`);
    if (pending.ok !== true) {
      throw new ControllerRejected(
        `controller rejected command ${commandId}: ${renderPayload(pending.result)}`,
        pending.result,
      );
    }
    return pending.result;
  }

  #register(scope: ControllerScope, commandId: string, toolCallId: string | null): PendingCommand {
    const pending = createPendingCommand({ scope, commandId, toolCallId });
    this.#pending.set(commandId, pending);
    return pending;
  }

  /** Resolves true on a real timeout (the command is then terminal and unregistered). */
  async #wait(pending: PendingCommand): Promise<boolean> {
    const timedOut = await waitForOutcome({
      pending,
      milliseconds: this.commandTimeoutSeconds * 1000,
      scheduleDeadline: this.#scheduleDeadline,
    });
    if (timedOut) this.#pending.delete(pending.commandId);
    return timedOut;
  }

  async #cancelAfterTimeout(
    original: ControllerRecord,
    scope: ControllerScope,
    pending: PendingCommand,
  ): Promise<void> {
    const release = await original.mutex.lock();
    try {
      const current = this.#findByIdentity(scope) ?? original;
      const frame = cancelFrame(pending);
      if (!current.connected) {
        current.deferredCancels.push(frame);
        if (current.deferredCancels.length > MAX_DEFERRED_CANCELS) {
          current.deferredCancels.splice(0, current.deferredCancels.length - MAX_DEFERRED_CANCELS);
        }
        return;
      }
      try {
        await current.send(frame);
      } catch (error) {
        this.#warn('could not write the cancel frame of a timed-out command', error);
      }
    } finally {
      release();
    }
  }

  /**
   * Single-shot completion; synchronous so a controller may answer from inside `send`. Refuses
   * unknown or settled ids and a `scope` that is not equal (all fields) to the command's current one.
   */
  complete(commandId: string, completion: CompletionInput): boolean {
    const pending = this.#pending.get(commandId);
    if (!pending || pending.done) return false;
    if (completion.scope !== undefined && !sameScope(completion.scope, pending.scope)) return false;
    pending.done = true;
    pending.ok = completion.ok === true;
    pending.result = completion.result;
    this.#pending.delete(commandId);
    pending.signal();
    return true;
  }

  /**
   * Cancels the first live command of the scope's identity with this tool-call id and writes
   * exactly one cancel frame. A pre-reconnect scope still works: only identity is compared.
   */
  async cancel(scope: ControllerScope, toolCallId: string): Promise<boolean> {
    const record = this.#findByIdentity(scope);
    if (!record?.connected) return false;
    const release = await record.mutex.lock();
    try {
      if (this.#findByIdentity(scope) !== record || !record.connected) return false;
      let match: PendingCommand | undefined;
      for (const pending of this.#pending.values()) {
        if (
          !pending.done &&
          pending.toolCallId === toolCallId &&
          sameIdentity(pending.scope, scope)
        ) {
          match = pending;
          break;
        }
      }
      if (!match) return false;
      this.#settleCancelled(match);
      try {
        await record.send(cancelFrame(match));
      } catch (error) {
        this.#warn('could not write a cancel frame', error);
      }
      return true;
    } finally {
      release();
    }
  }

  // ---- artifacts and turn targets ------------------------------------------------------------

  /** Keeps `store` in the slot of `profileId` (absent = default slot); `null` clears the slot. */
  attachArtifactStore(store: ArtifactReferenceValidator | null, profileId?: string | null): void {
    const slot = profileId ?? '';
    if (store === null) this.#artifactStores.delete(slot);
    else this.#artifactStores.set(slot, store);
  }

  #artifactStoreFor(scope: ControllerScope): ArtifactReferenceValidator | undefined {
    const slot = scope.profileId ?? '';
    return this.#artifactStores.get(slot) ?? this.#artifactStores.get('');
  }

  /** Points the session's next commands to a tab (and frame) of one controller. */
  setTurnTarget(sessionId: string, target: TurnTarget): void {
    this.#turnTargets.set(sessionId, target);
  }

  clearTurnTarget(sessionId: string): void {
    this.#turnTargets.delete(sessionId);
  }
}
