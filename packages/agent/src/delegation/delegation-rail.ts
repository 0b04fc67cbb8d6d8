import type { Agent } from '../loop/agent-types.js';
import { type DelegationCredentialsConfig, delegateTask } from './delegate-task.js';

/*
 * The rail `@hermes/review-engine` declares (`DelegationRail`), restated here structurally so
 * this package neither imports nor exposes review-engine types. A compile-time test
 * (test/delegation-rail.types.test.ts) assigns `createDelegationRail(…)` to review-engine's
 * interface, so a drift on either side breaks the build.
 */

/** Where the completion must come back to. */
export interface RailOrigin {
  readonly sessionKey?: string | undefined;
  readonly originUiSessionId?: string | undefined;
  readonly originSessionId?: string | undefined;
  readonly parentSessionId?: string | undefined;
}

/** One delegated job (a reviewer): goal, briefing, routing owner and its fallback chain. */
export interface RailRequest {
  readonly goal: string;
  readonly context: string;
  readonly credentialsCfg: DelegationCredentialsConfig | null;
  readonly fallbackProviders: readonly unknown[];
  readonly origin: RailOrigin;
  /**
   * The job is safe to run again (a review is an investigation): if its process stops before it
   * finishes, the next start runs it again from its task instead of reporting an unknown outcome.
   */
  readonly resumable?: boolean | undefined;
}

export interface RailDispatch {
  readonly delegationId: string;
  readonly mode: 'background' | 'sync';
  readonly result?: unknown;
  readonly model?: string | undefined;
  readonly note?: string | undefined;
}

export interface RailRefusal {
  readonly error: string;
}

export interface AgentDelegationRail {
  dispatch(request: RailRequest): Promise<RailDispatch | RailRefusal>;
}

export interface CreateDelegationRailOptions {
  /** The primary agent of the conversation (its tools, config, route, registry). */
  readonly agent: Agent;
  /** The conversation's session, when `origin` does not name it. */
  readonly sessionId?: string;
  /** The session key to stamp when `origin` has none (a gateway chat key; default the session id). */
  readonly sessionKey?: string;
  /** The UI session to stamp when `origin` has none (TUI, desktop). */
  readonly uiSessionId?: string;
  /** Working directory of the reviewer (default the agent's). */
  readonly cwd?: string;
}

/**
 * The default delegation rail over `delegateTask`: one background child (`background: true`,
 * the request's `credentialsCfg` as the routing owner with `fallbackProviders` as its chain).
 * With an async registry on the agent it returns `mode: 'background'` at once and the result
 * re-enters the conversation through completion delivery; without one (or at capacity) it runs
 * the child inline and returns `mode: 'sync'` with the results. Refusals resolve `{ error }`.
 * A `resumable` request is a resumable unit (see `DelegateTaskOptions.resumable`).
 */
export function createDelegationRail(options: CreateDelegationRailOptions): AgentDelegationRail {
  return {
    async dispatch(request) {
      const sessionId =
        request.origin.originSessionId ?? request.origin.parentSessionId ?? options.sessionId;
      const result = await delegateTask(
        { tasks: [{ goal: request.goal, context: request.context }] },
        {
          parent: options.agent,
          background: true,
          credentialsCfg: request.credentialsCfg,
          fallbackProviders: request.fallbackProviders,
          ...(request.resumable ? { resumable: true } : {}),
          ...(sessionId ? { sessionId } : {}),
          origin: {
            sessionKey: request.origin.sessionKey ?? options.sessionKey ?? sessionId,
            originUiSessionId: request.origin.originUiSessionId ?? options.uiSessionId,
            originSessionId: sessionId,
            parentSessionId: request.origin.parentSessionId ?? sessionId,
          },
          ...(options.cwd ? { cwd: options.cwd } : {}),
        },
      );
      if ('error' in result && typeof result.error === 'string') return { error: result.error };
      // A call split into one unit (independent completions) completes under that unit's id.
      const units = Array.isArray(result.units) ? result.units : [];
      const only = units.length === 1 ? (units[0] as { delegation_id?: unknown }) : undefined;
      const delegationId = String(only?.delegation_id ?? result.delegation_id ?? '');
      const model = typeof result.model === 'string' ? result.model : undefined;
      const note = typeof result.note === 'string' ? result.note : undefined;
      if (result.status === 'dispatched') return { delegationId, mode: 'background', model, note };
      return { delegationId, mode: 'sync', result: result.results, model, note };
    },
  };
}
