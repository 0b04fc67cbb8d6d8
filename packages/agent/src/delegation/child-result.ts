/** One tool call a subagent made, as its result reports it (no arguments, no output). */
export interface ToolTraceEntry {
  readonly tool: string;
  readonly args_bytes: number;
  readonly input_summary: {
    readonly argument_keys: readonly string[];
    readonly targets: readonly string[];
  };
  result_bytes: number;
  status: 'ok' | 'error' | 'running';
}

/** `completed`, `interrupted`, `failed` from a run; `timeout`, `error`, `stalled`, `unknown` otherwise. */
export type ChildStatus =
  | 'completed'
  | 'interrupted'
  | 'failed'
  | 'timeout'
  | 'error'
  | 'stalled'
  | 'unknown';

/**
 * One subagent's result entry (the reference's contract, snake_case because it is what the
 * delegating model reads and what the completion carries).
 */
export interface ChildResult {
  readonly task_index: number;
  readonly subagent_id: string;
  readonly goal: string;
  readonly status: ChildStatus;
  /** The subagent's final answer (a self-report); `null` when it produced none. */
  summary: string | null;
  readonly api_calls: number;
  readonly duration_seconds: number;
  readonly model: string;
  readonly exit_reason: 'completed' | 'max_iterations' | 'interrupted' | 'error';
  readonly truncated: boolean;
  readonly tokens: { readonly input: number; readonly output: number };
  readonly tool_trace: readonly ToolTraceEntry[];
  /** No pricing table here: always `null` with `cost_status: 'unknown'`. */
  readonly cost_usd: number | null;
  readonly cost_status: 'unknown';
  readonly session_id?: string;
  readonly error?: string;
  readonly failure_reason?: string;
  readonly schema_valid?: boolean;
  readonly schema_retries?: number;
  readonly schema_errors?: readonly string[];
  missed_steer?: readonly string[];
  readonly timeout_seconds?: number;
  readonly timed_out_after_seconds?: number;
  readonly timeout_phase?: 'before_first_llm_call' | 'after_llm_calls';
  readonly diagnostic_path?: string;
  summary_truncated?: boolean;
  summary_full_path?: string;
}

/** What one batch (or async unit) produced. */
export interface BatchResult {
  readonly results: ChildResult[];
  readonly total_duration_seconds: number;
  readonly group?: string;
}

/** Statuses a batch counts as success. */
export function isSuccessStatus(status: string): boolean {
  return status === 'completed' || status === 'success';
}

/** A batch is `error` only when no child completed. */
export function batchStatus(results: readonly { status: string }[]): 'completed' | 'error' {
  return results.some((entry) => isSuccessStatus(entry.status)) ? 'completed' : 'error';
}

/** A result for a child that never reported (interrupted before it ran, or its owner died). */
export function placeholderResult(input: {
  taskIndex: number;
  subagentId: string;
  goal: string;
  model: string;
  status: ChildStatus;
  error: string;
}): ChildResult {
  return {
    task_index: input.taskIndex,
    subagent_id: input.subagentId,
    goal: input.goal,
    status: input.status,
    summary: null,
    api_calls: 0,
    duration_seconds: 0,
    model: input.model,
    exit_reason: input.status === 'interrupted' ? 'interrupted' : 'error',
    truncated: false,
    tokens: { input: 0, output: 0 },
    tool_trace: [],
    cost_usd: null,
    cost_status: 'unknown',
    error: input.error,
  };
}

/** One result per task of a unit (its ledger task record), none of which ran: every goal named. */
export function placeholderResults(
  task: {
    readonly goals: readonly string[];
    readonly task_indexes: readonly number[];
    readonly subagent_ids: readonly string[];
    readonly model: string;
  },
  status: 'unknown' | 'interrupted',
  error: string,
): ChildResult[] {
  return task.goals.map((goal, position) =>
    placeholderResult({
      taskIndex: task.task_indexes[position] ?? position,
      subagentId: task.subagent_ids[position] ?? `sa-${position}`,
      goal,
      model: task.model,
      status,
      error,
    }),
  );
}
