import {
  AgentError,
  type AsyncDelegationEvent,
  createDelegationRail,
  delegateTask,
  formatAsyncDelegation,
  ownsCompletion,
  type ProfileDeliveryOptions,
  type ProfileRuntime,
  type RunTurnOptions,
  type TurnResult,
} from '@hermes/agent';
import type { Bridge } from '../bridge.js';
import type { DelegationSupport, SubagentView } from './delegation-support.js';
import type { LiveSession } from './live-session.js';
import { startTurn } from './turns.js';

/** How often the ledger is checked for completions other processes owe this bridge (ms). */
export const COMPLETION_POLL_MS = 30_000;

function liveSessions(bridge: Bridge, runtime: ProfileRuntime): LiveSession[] {
  return [...bridge.sessions.values()].filter(
    (session) => !session.closed && session.runtime === runtime,
  );
}

/**
 * The live session that owns a completion: first the front-end session that asked
 * (`origin_ui_session_id`), then any session of the same conversation (session key or
 * compression lineage). Positive ownership only — anything else stays owed.
 */
export function ownerOf(
  bridge: Bridge,
  runtime: ProfileRuntime,
  event: AsyncDelegationEvent,
): LiveSession | undefined {
  const sessions = liveSessions(bridge, runtime);
  const byUi = sessions.find((session) => event.origin_ui_session_id === session.id);
  if (byUi) return byUi;
  const store = runtime.storeIfOpen;
  return sessions.find((session) =>
    ownsCompletion(
      event,
      { sessionId: session.storedSessionId, sessionKey: session.conversationId },
      store,
    ),
  );
}

function sessionFor(
  bridge: Bridge,
  runtime: ProfileRuntime,
  storedSessionId: string,
): LiveSession | undefined {
  const store = runtime.storeIfOpen;
  const root = store?.getSession(storedSessionId)?.lineageRootId ?? storedSessionId;
  return liveSessions(bridge, runtime).find(
    (session) => session.storedSessionId === storedSessionId || session.conversationId === root,
  );
}

/**
 * Runs an injected completion turn through the bridge's own turn runner (events, replay, state).
 * Without `options.message` (after a crash, the completion was stored but never answered) the
 * turn answers what is already stored and adds no message of its own.
 */
export function runDeliveryTurn(
  bridge: Bridge,
  session: LiveSession,
  options: RunTurnOptions,
): Promise<TurnResult> {
  if (session.running || session.busy || session.closed) {
    return Promise.reject(
      new AgentError({
        code: 'session_busy',
        message: `session ${session.storedSessionId} is busy`,
      }),
    );
  }
  return new Promise<TurnResult>((resolve, reject) => {
    startTurn(session, {
      ...(options.message !== undefined ? { text: options.message } : {}),
      origin: 'delegation',
      ...(options.displayKind ? { displayKind: options.displayKind } : {}),
      ...(options.onMessageStored ? { onMessageStored: options.onMessageStored } : {}),
      onIdle: (idle) => bridge.onIdle(idle),
      onResult: (result, failure) => {
        if (result) resolve(result);
        else reject(failure ?? new Error('the delivered turn ended without a result'));
      },
    }).catch(() => {
      // The refusal itself (an AgentError) reaches `onResult`; this rejection is its RPC form.
    });
  });
}

/**
 * How one profile's completions come back: into the live session that owns them, as a new turn
 * of the bridge's own turn runner, only while that session is idle with nothing queued. The
 * profile runtime runs the delivery (`onRegistry`); the bridge tells it when a session idles.
 */
export function completionDelivery(
  bridge: Bridge,
  runtime: ProfileRuntime,
): ProfileDeliveryOptions {
  return {
    pollMs: COMPLETION_POLL_MS,
    owner: (event) => ownerOf(bridge, runtime, event)?.storedSessionId,
    isIdle: (sessionId) => {
      const session = sessionFor(bridge, runtime, sessionId);
      return (
        session !== undefined && !session.running && !session.busy && session.queue.length === 0
      );
    },
    turnOptions: (event, sessionId) => {
      const session = sessionFor(bridge, runtime, sessionId);
      session?.emit('delegation.completed', {
        delegation_id: event.delegation_id,
        status: event.status,
        goal: event.goal,
        text: formatAsyncDelegation(event),
      });
      return {};
    },
    runTurn: (options) => {
      const session = sessionFor(bridge, runtime, options.sessionId);
      if (!session) {
        return Promise.reject(
          new AgentError({
            code: 'session_not_found',
            message: `no live session for ${options.sessionId}`,
          }),
        );
      }
      return runDeliveryTurn(bridge, session, options);
    },
  };
}

function view(entry: Record<string, unknown>): SubagentView {
  return {
    subagent_id: String(entry.subagent_id ?? ''),
    delegation_id: String(entry.delegation_id ?? ''),
    goal: String(entry.goal ?? ''),
    status: String(entry.status ?? ''),
    running_seconds: Number(entry.running_seconds ?? 0),
    accepting_steer: entry.accepting_steer === true,
    api_calls: Number(entry.api_calls ?? 0),
    current_tool: typeof entry.current_tool === 'string' ? entry.current_tool : null,
  };
}

/** `/review`, `subagent.*` over `@hermes/agent`'s rail, scoped to each session's spawn tree. */
export function agentDelegation(): DelegationSupport {
  async function control(session: LiveSession, args: Record<string, unknown>) {
    const agent = await session.runtime.agent();
    return session.runtime.run(() =>
      delegateTask(args, { parent: agent, sessionId: session.storedSessionId }),
    );
  }
  return {
    async rail(session) {
      const agent = await session.runtime.agent();
      return createDelegationRail({
        agent,
        sessionId: session.storedSessionId,
        sessionKey: session.conversationId,
        uiSessionId: session.id,
        ...(session.cwd ? { cwd: session.cwd } : {}),
      });
    },
    async list(session) {
      const result = (await control(session, { action: 'list' })) as {
        subagents?: Record<string, unknown>[];
      };
      return (result.subagents ?? []).map(view);
    },
    async steer(session, subagentId, message) {
      const result = (await control(session, {
        action: 'steer',
        subagent_id: subagentId,
        message,
      })) as Record<string, unknown>;
      if (result.status === 'queued') return { status: 'queued' };
      if (result.status === 'rejected')
        return { status: 'rejected', reason: String(result.error ?? 'not accepting steers') };
      return undefined;
    },
    async stop(session, subagentId) {
      const before = (await this.list(session)).find((entry) => entry.subagent_id === subagentId);
      if (!before) return undefined;
      if (!before.accepting_steer && before.status !== 'finishing') return 'already_stopping';
      const result = (await control(session, {
        action: 'stop',
        subagent_id: subagentId,
      })) as Record<string, unknown>;
      return result.status === 'stopping' ? 'stopping' : undefined;
    },
  };
}
