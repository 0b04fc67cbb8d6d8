import type { HomeScope } from '@hermes/config';
import type { AsyncUnit, DelegationOrigin } from './async-unit.js';
import type {
  AsyncDelegationEvent,
  DelegationResultRecord,
  DelegationTaskRecord,
} from './completion-event.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';

/*
 * What the async delegation registry keeps of one unit while it is its own, and what it reads from
 * it: its listing, its stall state and, once its result is recorded, its completion.
 */

/** One unit the registry holds: running, waiting for a slot, or ending. */
export interface UnitRecord {
  /** A waiting resumed unit stopped before it ran gets its pre-takeover task back here. */
  unit: AsyncUnit;
  readonly controller: AbortController;
  status: string;
  readonly dispatchedAt: number;
  /** False while a taken-over unit waits for a free slot (`status: 'queued'`). */
  started: boolean;
  /** The home scope it runs in (captured when it was dispatched or taken over). */
  scope: HomeScope | undefined;
  /** What a waiting unit's row goes back to if it never runs here (resume not spent). */
  unrunTask: DelegationTaskRecord | undefined;
  startedMs: number;
  lastToken: string;
  lastProgressMs: number;
  stallingSinceMs: number | undefined;
  stall: { quietSeconds: number; thresholdSeconds: number; phase: 'idle' | 'in_tool' } | undefined;
  finalized: boolean;
}

/** The record of a unit about to run (a waiting unit is marked by its caller). */
export function newUnitRecord(
  unit: AsyncUnit,
  dispatchedAt: number,
  scope: HomeScope | undefined,
): UnitRecord {
  const now = performance.now();
  return {
    unit,
    controller: new AbortController(),
    status: 'running',
    dispatchedAt,
    started: true,
    scope,
    unrunTask: undefined,
    startedMs: now,
    lastToken: '',
    lastProgressMs: now,
    stallingSinceMs: undefined,
    stall: undefined,
    finalized: false,
  };
}

/** A running unit as `list()` shows it. */
export interface AsyncDelegationListing {
  readonly delegation_id: string;
  readonly goal: string;
  readonly status: string;
  readonly session_key: string | null;
  readonly running_seconds: number;
  readonly seconds_since_progress: number | null;
  readonly in_tool: boolean;
  readonly children_activity: { readonly api_calls: number; readonly current_tool: string | null };
}

/** A unit as `list()` shows it, `nowMs` on the monotonic clock. */
export function listingOf(record: UnitRecord, nowMs: number): AsyncDelegationListing {
  const progress = record.unit.progress?.();
  return {
    delegation_id: record.unit.delegationId,
    goal: record.unit.task.goal,
    status: record.status,
    session_key: record.unit.origin.sessionKey ?? null,
    running_seconds: Math.round((nowMs - record.startedMs) / 100) / 10,
    seconds_since_progress: progress
      ? Math.round((nowMs - Math.max(record.lastProgressMs, progress.lastActivityMs)) / 100) / 10
      : null,
    in_tool: progress?.inTool ?? false,
    children_activity: {
      api_calls: progress?.apiCalls ?? 0,
      current_tool: progress?.currentTool ?? null,
    },
  };
}

/** The unit was asked for from this conversation (by session key, or origin or parent session). */
export function matchesOrigin(
  origin: DelegationOrigin,
  filter: { sessionKey?: string; originSessionId?: string },
): boolean {
  if (filter.sessionKey !== undefined && origin.sessionKey !== filter.sessionKey) return false;
  if (
    filter.originSessionId !== undefined &&
    origin.originSessionId !== filter.originSessionId &&
    origin.parentSessionId !== filter.originSessionId
  )
    return false;
  return true;
}

/** Milliseconds as seconds with one decimal (stall metadata). */
function tenths(ms: number): number {
  return Math.round(ms / 100) / 10;
}

export interface StallThresholds {
  /** How often the monitor looks (default 30 s). */
  readonly checkIntervalMs: number;
  /** No progress for this long while idle → `stalling` + interrupt (default 450 s). */
  readonly idleMs: number;
  /** The same inside a tool call (default 1200 s). */
  readonly inToolMs: number;
  /** After the interrupt, this long to return before it is finalised `stalled` (default 120 s). */
  readonly graceMs: number;
}

/**
 * One look of the stall monitor at a unit (a running one that reports progress): moves its
 * progress token, and answers `stalling` when it has been quiet past its threshold (now marked
 * `stalling` with its stall metadata: to be interrupted), `stalled` when it is still there a grace
 * period after that (to be finalised), else undefined.
 */
export function advanceStall(
  record: UnitRecord,
  nowMs: number,
  thresholds: StallThresholds,
): 'stalling' | 'stalled' | undefined {
  if (record.finalized || !record.started || !record.unit.progress) return undefined;
  const progress = record.unit.progress();
  const token = `${progress.apiCalls}|${progress.currentTool ?? ''}|${progress.lastActivityMs}`;
  if (token !== record.lastToken) {
    record.lastToken = token;
    record.lastProgressMs = Math.max(record.lastProgressMs, progress.lastActivityMs);
  }
  const quietMs = nowMs - record.lastProgressMs;
  const phase = progress.inTool ? 'in_tool' : 'idle';
  const thresholdMs = progress.inTool ? thresholds.inToolMs : thresholds.idleMs;
  if (record.status === 'running' && quietMs >= thresholdMs) {
    record.status = 'stalling';
    record.stallingSinceMs = nowMs;
    record.stall = { quietSeconds: tenths(quietMs), thresholdSeconds: tenths(thresholdMs), phase };
    return 'stalling';
  }
  if (
    record.status === 'stalling' &&
    record.stallingSinceMs !== undefined &&
    nowMs - record.stallingSinceMs >= thresholds.graceMs
  ) {
    return 'stalled';
  }
  return undefined;
}

/** The result of a unit finalised `stalled`: its finished children and the stall metadata. */
export function stalledOutcome(
  record: UnitRecord,
  nowMs: number,
  graceMs: number,
): DelegationResultRecord {
  const { delegationId } = record.unit;
  const stall = record.stall ?? { quietSeconds: 0, thresholdSeconds: 0, phase: 'idle' };
  return {
    status: 'stalled',
    results: [...(record.unit.partialResults?.() ?? [])],
    error: MESSAGES.stalled(delegationId, stall.quietSeconds, stall.phase),
    total_duration_seconds: Math.round((nowMs - record.startedMs) / 10) / 100,
    stalled_after_quiet_seconds: stall.quietSeconds,
    stall_threshold_seconds: stall.thresholdSeconds,
    stall_phase: stall.phase,
    stall_grace_seconds: tenths(graceMs),
  };
}

/** The completion a unit publishes once `outcome` is recorded, stamped with its origin. */
export function completionEventOf(
  record: UnitRecord,
  outcome: DelegationResultRecord,
  graceMs: number,
): AsyncDelegationEvent {
  const { unit } = record;
  const { task, origin } = unit;
  return {
    type: 'async_delegation',
    delegation_id: unit.delegationId,
    session_key: origin.sessionKey ?? null,
    origin_ui_session_id: origin.originUiSessionId ?? null,
    origin_session_id: origin.originSessionId ?? null,
    parent_session_id: origin.parentSessionId ?? null,
    goal: task.goal,
    goals: task.goals,
    context: task.context,
    toolsets: task.toolsets,
    role: task.role,
    model: task.model,
    status: outcome.status,
    dispatched_at: record.dispatchedAt,
    completed_at: Date.now() / 1000,
    is_batch: true,
    results: outcome.results ?? [],
    error: outcome.error ?? null,
    total_duration_seconds: outcome.total_duration_seconds ?? 0,
    ...(task.group ? { group: task.group } : {}),
    ...(task.resume_count ? { resumed: task.resume_count } : {}),
    ...(outcome.status === 'stalled' && record.stall
      ? {
          stalled_after_quiet_seconds: record.stall.quietSeconds,
          stall_threshold_seconds: record.stall.thresholdSeconds,
          stall_phase: record.stall.phase,
          stall_grace_seconds: tenths(graceMs),
        }
      : {}),
  };
}
