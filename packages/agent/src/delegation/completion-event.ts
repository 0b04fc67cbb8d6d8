import type { AsyncDelegationRecord } from '@hermes/session-store';
import { type ChildResult, placeholderResult } from './child-result.js';

/**
 * A finished background delegation, as it travels on the `CompletionQueue` and is stamped with
 * the routing identity captured when it was dispatched. Batch-shaped even for one task. Field
 * names are the reference's (snake_case), because surfaces and logs exchange them as JSON.
 */
export interface AsyncDelegationEvent {
  readonly type: 'async_delegation';
  readonly delegation_id: string;
  /** The chat route (gateway) or, by default, the delegating session's id. */
  readonly session_key: string | null;
  /** The front-end session (TUI, desktop) that asked, when one did. */
  readonly origin_ui_session_id: string | null;
  /** The session (state.db) the delegation was asked from. */
  readonly origin_session_id: string | null;
  /** The delegating agent's session. */
  readonly parent_session_id: string | null;
  readonly goal: string;
  readonly goals: readonly string[];
  readonly context: string;
  readonly toolsets: readonly string[];
  readonly role: string;
  readonly model: string;
  /** `completed` (some child completed), `error` (none did), `stalled`, `unknown`, … */
  readonly status: string;
  /** Epoch seconds. */
  readonly dispatched_at: number;
  readonly completed_at: number;
  readonly is_batch: boolean;
  readonly results: readonly ChildResult[];
  readonly error: string | null;
  readonly total_duration_seconds: number;
  readonly group?: string;
  /** Re-enqueued from the ledger after a restart. */
  readonly restored?: boolean;
  /** How many times the unit was run again after its process stopped (resumable units). */
  readonly resumed?: number;
  readonly stalled_after_quiet_seconds?: number;
  readonly stall_threshold_seconds?: number;
  readonly stall_phase?: 'idle' | 'in_tool';
  readonly stall_grace_seconds?: number;
}

/** One task of a resumable unit, as it is run again. */
export interface ResumableTaskRecord {
  readonly goal: string;
  readonly context: string;
  readonly output_schema?: Readonly<Record<string, unknown>>;
  readonly images?: readonly string[];
  readonly group?: string;
}

/**
 * What a resumable unit needs to be run again by another process: its tasks, its routing owner
 * and chain (API keys left out — they are taken from the live config again), the delegating
 * session, the working directory and the parent's surface and model.
 */
export interface DelegationResumeSpec {
  readonly tasks: readonly ResumableTaskRecord[];
  /** The per-call routing owner (`credentialsCfg`) without its key; `null`: the `delegation` section. */
  readonly credentials: {
    readonly provider: string;
    readonly model: string;
    readonly baseUrl: string;
    readonly apiMode: string;
    /** The owner carried a key of its own (left out here). */
    readonly hadApiKey: boolean;
  } | null;
  /** The owner's fallback chain, keys left out. */
  readonly fallback_providers: readonly unknown[];
  readonly session_id: string | null;
  readonly cwd: string;
  readonly platform: string;
  readonly model: string;
  /**
   * The capacity slot it shares with the other units of its call (the call's delegation id): the
   * units of a split call take one slot when run again, as at dispatch.
   */
  readonly slot_key?: string;
}

/** What the ledger's `task_json` holds: everything a completion needs besides its result. */
export interface DelegationTaskRecord {
  readonly goal: string;
  readonly goals: readonly string[];
  readonly context: string;
  readonly toolsets: readonly string[];
  readonly role: string;
  readonly model: string;
  readonly origin_session_id: string | null;
  readonly task_indexes: readonly number[];
  readonly subagent_ids: readonly string[];
  readonly group?: string;
  /** Safe to run again: a process that stops before it finishes leaves it for the next start. */
  readonly resumable?: boolean;
  /** How many times it was run again so far. */
  readonly resume_count?: number;
  /**
   * How many of those runs followed a crash (the owner died without letting go of the row): at
   * most `DELEGATION_MAX_RESUMES`. Runs after a graceful stop are not counted.
   */
  readonly crash_resumes?: number;
  /** How to run it again (resumable units only). */
  readonly resume?: DelegationResumeSpec;
}

/**
 * The capacity slot of a unit run again: the one its call took at dispatch, or — a record written
 * before the slot was kept — a slot of its own.
 */
export function resumedSlotKey(delegationId: string, task: DelegationTaskRecord): string {
  return task.resume?.slot_key ?? delegationId;
}

/** What the ledger's `result_json` holds. */
export interface DelegationResultRecord {
  readonly status: string;
  readonly results?: readonly ChildResult[];
  readonly error?: string | null;
  readonly total_duration_seconds?: number;
  readonly stalled_after_quiet_seconds?: number;
  readonly stall_threshold_seconds?: number;
  readonly stall_phase?: 'idle' | 'in_tool';
  readonly stall_grace_seconds?: number;
}

/** The label of a unit: its goal, or `<n> parallel subagents: <goal[:40]>; …`. */
export function unitGoal(goals: readonly string[]): string {
  if (goals.length === 1) return goals[0] ?? '';
  return `${goals.length} parallel subagents: ${goals.map((goal) => goal.slice(0, 40)).join('; ')}`;
}

function parseObject(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((entry): entry is string => typeof entry === 'string')
    : [];
}

/**
 * Rebuilds a completion from its ledger row (restored after a restart). A row recovered as
 * `unknown` without per-child results gets one `unknown` entry per task, so nothing the
 * delegating agent asked for goes unmentioned.
 */
export function eventFromLedgerRow(row: AsyncDelegationRecord): AsyncDelegationEvent {
  const task = parseObject(row.taskJson);
  const result = parseObject(row.resultJson);
  const goals = strings(task.goals);
  const subagentIds = strings(task.subagent_ids);
  const indexes = Array.isArray(task.task_indexes)
    ? task.task_indexes.filter((entry): entry is number => typeof entry === 'number')
    : goals.map((_, index) => index);
  const model = typeof task.model === 'string' ? task.model : '';
  const status = typeof result.status === 'string' ? result.status : row.state;
  const error =
    typeof result.error === 'string' ? result.error : row.error === null ? null : row.error;
  let results = Array.isArray(result.results) ? (result.results as ChildResult[]) : [];
  if (results.length < goals.length) {
    const have = new Set(results.map((entry) => entry.task_index));
    const missing = goals
      .map((goal, position) => ({ goal, position, index: indexes[position] ?? position }))
      .filter(({ index }) => !have.has(index))
      .map(({ goal, position, index }) =>
        placeholderResult({
          taskIndex: index,
          subagentId: subagentIds[position] ?? `sa-${index}`,
          goal,
          model,
          status: status === 'unknown' ? 'unknown' : 'error',
          error: error ?? 'no result was recorded for this subagent',
        }),
      );
    results = [...results, ...missing].sort((left, right) => left.task_index - right.task_index);
  }
  const stall: Partial<AsyncDelegationEvent> = {};
  for (const key of [
    'stalled_after_quiet_seconds',
    'stall_threshold_seconds',
    'stall_grace_seconds',
  ] as const)
    if (typeof result[key] === 'number') Object.assign(stall, { [key]: result[key] });
  if (result.stall_phase === 'idle' || result.stall_phase === 'in_tool')
    Object.assign(stall, { stall_phase: result.stall_phase });
  return {
    type: 'async_delegation',
    delegation_id: row.delegationId,
    session_key: row.sessionKey,
    origin_ui_session_id: row.originUiSessionId,
    origin_session_id: typeof task.origin_session_id === 'string' ? task.origin_session_id : null,
    parent_session_id: row.parentSessionId,
    goal: typeof task.goal === 'string' ? task.goal : unitGoal(goals),
    goals,
    context: typeof task.context === 'string' ? task.context : '',
    toolsets: strings(task.toolsets),
    role: typeof task.role === 'string' ? task.role : 'leaf',
    model,
    status,
    dispatched_at: row.dispatchedAt,
    completed_at: row.completedAt ?? row.dispatchedAt,
    is_batch: true,
    results,
    error,
    total_duration_seconds:
      typeof result.total_duration_seconds === 'number' ? result.total_duration_seconds : 0,
    ...(typeof task.group === 'string' ? { group: task.group } : {}),
    ...(typeof task.resume_count === 'number' && task.resume_count > 0
      ? { resumed: task.resume_count }
      : {}),
    ...stall,
  };
}
