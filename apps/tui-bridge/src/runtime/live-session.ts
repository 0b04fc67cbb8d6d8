import { randomBytes } from 'node:crypto';
import type { ApprovalDecision, ProfileRuntime } from '@hermes/agent';
import { EVENT_METHOD, type EventEnvelope } from '../contract/envelope.js';
import type { EventPayload, EventType } from '../contract/events.js';
import type { Connection } from '../rpc/connection.js';

/**
 * Events of one running turn kept for replay to a front end that (re)attaches mid-turn. Streamed
 * deltas are merged as they come (one replayed delta per stretch of text), so the bound is on
 * the other events (tool calls, stored messages) — more than a turn makes.
 */
export const MAX_REPLAY_EVENTS = 20_000;

/** Events whose payloads are consecutive pieces of one text: merged in the replay buffer. */
const DELTA_EVENTS: ReadonlySet<string> = new Set(['message.delta', 'reasoning.delta']);

export type TurnOrigin = 'prompt' | 'queue' | 'delegation' | 'bot_relay';

export interface RunningTurn {
  /** Known once the agent reports `run.started`. */
  runId: string | undefined;
  readonly origin: TurnOrigin;
  readonly controller: AbortController;
  /** Events of this turn, in order, for replay (consecutive deltas of one kind merged). */
  readonly events: EventEnvelope['params'][];
  /** Events past `MAX_REPLAY_EVENTS` not kept; a replay ends with a `warning` that says so. */
  replayDropped: number;
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
    if (turn && type !== 'gateway.ready') keepForReplay(turn, envelope.params);
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
    const send = (params: EventEnvelope['params']) =>
      connection.sendEvent({
        jsonrpc: '2.0',
        method: EVENT_METHOD,
        params: { ...params, payload: { ...params.payload, replayed: true } },
      });
    for (const params of turn.events) {
      // An approval already answered (or timed out) is history: asking again would be a question
      // nobody can answer (4010). One still pending is asked here too.
      if (
        params.type === 'approval.request' &&
        !this.approvals.has(String(params.payload.request_id))
      )
        continue;
      send(params);
    }
    if (turn.replayDropped > 0) {
      send({
        type: 'warning',
        session_id: this.id,
        payload: {
          run_id: turn.runId ?? null,
          code: 'replay_truncated',
          message: `${turn.replayDropped} events of this turn were not kept for replay; its stored messages are complete once it ends (session.resume)`,
        },
      });
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

function keepForReplay(turn: RunningTurn, params: EventEnvelope['params']): void {
  const last = turn.events.at(-1);
  if (
    DELTA_EVENTS.has(params.type) &&
    last?.type === params.type &&
    last.payload.run_id === params.payload.run_id
  ) {
    turn.events[turn.events.length - 1] = {
      ...last,
      payload: {
        ...last.payload,
        text: `${String(last.payload.text)}${String(params.payload.text)}`,
      },
    };
    return;
  }
  if (turn.events.length < MAX_REPLAY_EVENTS) turn.events.push(params);
  else turn.replayDropped += 1;
}
