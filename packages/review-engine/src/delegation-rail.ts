import type { ReviewCredentials } from './resolve-review-routing.js';

/**
 * Who asked for the review, so its completion can come back to the same conversation. The engine
 * passes it to the rail unchanged; a rail stamps it on the completion it emits.
 */
export interface ReviewOrigin {
  /** The chat route, e.g. `agent:main:telegram:dm:42` (gateway), or the session id (CLI). */
  readonly sessionKey?: string | undefined;
  /** The front-end session id of a TUI or desktop client. */
  readonly originUiSessionId?: string | undefined;
  /** The durable session (state.db) the review was asked from. */
  readonly originSessionId?: string | undefined;
  /** The primary agent's session, when it differs from `originSessionId`. */
  readonly parentSessionId?: string | undefined;
}

/** One reviewer to start. */
export interface DelegationRequest {
  /** One line, at most 80 characters: the reviewer's live label and its first user message. */
  readonly goal: string;
  /** The full briefing; a rail puts it in the reviewer's system prompt. */
  readonly context: string;
  /**
   * The routing owner from `auxiliary.review`, or `null` to run on the primary agent's own model,
   * provider and credentials (the default).
   */
  readonly credentialsCfg: ReviewCredentials | null;
  /**
   * The fallback chain the pinned route owns (`auxiliary.review.fallback_providers`); `[]` = no
   * fallback. Always `[]` when `credentialsCfg` is `null`, where the rail's own policy applies.
   */
  readonly fallbackProviders: readonly unknown[];
  readonly origin: ReviewOrigin;
  /**
   * The job is safe to run again: a review is an investigation, so a rail that can should run it
   * again from this request when its process stops before the reviewer finishes (a restart, a
   * crash) instead of reporting an unknown outcome. `startReview` always sets it.
   */
  readonly resumable?: boolean | undefined;
}

/** The rail accepted the reviewer. */
export interface DelegationDispatch {
  /** Identifies the run (shown to the user, found again in the completion). */
  readonly delegationId: string;
  /**
   * `background`: the reviewer runs on; its review re-enters the conversation later as a
   * completion. `sync`: the rail could not deliver later (no async channel, at capacity) and ran
   * the reviewer to the end already; `result` holds what it produced.
   */
  readonly mode: 'background' | 'sync';
  readonly result?: unknown;
  /** The model the reviewer runs on, when the rail knows it. */
  readonly model?: string | undefined;
  /** Anything the rail wants to tell the user (e.g. why it ran synchronously). */
  readonly note?: string | undefined;
}

/** The rail refused; `error` is shown to the user verbatim. */
export interface DelegationRefused {
  readonly error: string;
}

/**
 * How `/review` starts a reviewer. Implement it to run reviews on any agent runtime;
 * `@hermes/agent` provides the default (its async delegation rail).
 *
 * `dispatch` must not wait for a background review to finish. It refuses by resolving
 * `{ error }` with a message for the user (delegation unavailable, paused, at its depth limit,
 * credentials missing, …) — nothing may be started then. A rejected promise is treated as an
 * unexpected failure (`/review failed to start: …`).
 */
export interface DelegationRail {
  dispatch(request: DelegationRequest): Promise<DelegationDispatch | DelegationRefused>;
}
