import { randomBytes } from 'node:crypto';
import type { ApprovalDecision, ProfileRuntime } from '@hermes/agent';
import { EVENT_METHOD, type EventEnvelope } from '../contract/envelope.js';
import type { EventPayload, EventType } from '../contract/events.js';
import type { Connection } from '../rpc/connection.js';

/** Events of one running turn kept for replay to a front end that (re)attaches mid-turn. */
export const MAX_REPLAY_EVENTS = 20_000;

export type TurnOrigin = 'prompt' | 'queue' | 'delegation' | 'bot_relay';

export interface RunningTurn {
  /** Known once the agent reports `run.started`. */
  runId: string | undefined;
  readonly origin: TurnOrigin;
  readonly controller: AbortController;
  /** Event lines of this turn, in order, for replay. */
  readonly events: string[];
  replayTruncated: boolean;
  /** Settles when the turn has ended (whatever the outcome). */
  done: Promise<void>;
}

interface PendingApproval {
  readonly runId: string | undefined;
  readonly resolve: (decision: ApprovalDecision) => void;
}

export function newUiSessionId(): string {
  return `tui_${randomBytes(8).toString('hex')}`;
}

/**
 * A session as the bridge holds it while front ends use it: the stored conversation it runs on
 * (its compression tip), the connections that see its events, the running turn and its replay
 * buffer, queued prompts, steers and pending approvals. A front end that goes away detaches; the
 * session and its turn carry on.
 */
export class LiveSession {
  readonly id: string;
  readonly runtime: ProfileRuntime;
  /** The lineage root: the same for every id of the conversation, across compressions. */
  readonly conversationId: string;
  storedSessionId: string;
  title: string | null;
  cwd: string | null;
  running: RunningTurn | undefined;
  /** Set while an operation that needs the session idle runs (`/compress`). */
  busy: string | undefined;
  readonly queue: string[] = [];
  readonly steers: string[] = [];
  readonly approvals = new Map<string, PendingApproval>();
  readonly #listeners = new Set<Connection>();
  #held: string[] | undefined;
  #holds = 0;
  closed = false;

  constructor(options: {
    id?: string;
    runtime: ProfileRuntime;
    conversationId: string;
    storedSessionId: string;
    title: string | null;
    cwd: string | null;
  }) {
    this.id = options.id ?? newUiSessionId();
    this.runtime = options.runtime;
    this.conversationId = options.conversationId;
    this.storedSessionId = options.storedSessionId;
    this.title = options.title;
    this.cwd = options.cwd;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  attach(connection: Connection): void {
    this.#listeners.add(connection);
  }

  detach(connection: Connection): void {
    this.#listeners.delete(connection);
  }

  isAttached(connection: Connection): boolean {
    return this.#listeners.has(connection);
  }

  /**
   * Holds events back until `release()` — so a reply (`prompt.submit`'s run id) reaches the
   * front end before the events of what it started. Holds nest: two submits in flight (one of
   * them refused) release the events only once both replies are written.
   */
  hold(): void {
    this.#holds += 1;
    this.#held ??= [];
  }

  release(): void {
    if (this.#holds === 0) return;
    this.#holds -= 1;
    if (this.#holds > 0) return;
    const held = this.#held;
    this.#held = undefined;
    for (const line of held ?? []) this.#broadcast(line);
  }

  emit<T extends EventType>(type: T, payload: EventPayload<T>): void {
    const envelope: EventEnvelope = {
      jsonrpc: '2.0',
      method: EVENT_METHOD,
      params: { type, session_id: this.id, payload: payload as Record<string, unknown> },
    };
    const line = JSON.stringify(envelope);
    const turn = this.running;
    if (turn && type !== 'gateway.ready') {
      if (turn.events.length < MAX_REPLAY_EVENTS) turn.events.push(line);
      else turn.replayTruncated = true;
    }
    if (this.#held) this.#held.push(line);
    else this.#broadcast(line);
  }

  #broadcast(line: string): void {
    for (const connection of this.#listeners) connection.sendEvent(line);
  }

  /** Sends the running turn's events so far to one connection, each marked `replayed: true`. */
  replayTo(connection: Connection): void {
    const turn = this.running;
    if (!turn) return;
    for (const line of turn.events) {
      const envelope = JSON.parse(line) as EventEnvelope;
      envelope.params.payload.replayed = true;
      connection.sendEvent(envelope);
    }
  }

  /** Ends every pending approval with `deny` (the turn is over or the session closes). */
  denyPendingApprovals(): void {
    for (const [id, pending] of this.approvals) {
      this.approvals.delete(id);
      pending.resolve('deny');
    }
  }
}
