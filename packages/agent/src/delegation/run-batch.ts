import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CHARS_PER_TOKEN } from '../compression/estimate-tokens.js';
import type { AgentEvent } from '../events.js';
import type { BuiltChild } from './build-children.js';
import { type BatchResult, type ChildResult, placeholderResult } from './child-result.js';
import {
  HEARTBEAT_INTERVAL_MS,
  SUMMARY_FLOOR_CHARS,
  SUMMARY_HEADROOM_SHARE,
  SUMMARY_SPILL_DIR,
} from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';
import { runChild } from './run-child.js';
import type { LiveSubagent, SubagentTracker } from './subagent-tracker.js';

/** Events about the children of a batch, for whoever watches (the parent's turn, a registry). */
export type BatchEvent =
  | { readonly type: 'subagent.started'; readonly child: BuiltChild; readonly taskCount: number }
  | { readonly type: 'subagent.progress'; readonly child: BuiltChild; readonly text: string }
  | {
      readonly type: 'subagent.completed';
      readonly child: BuiltChild;
      readonly result: ChildResult;
      readonly line: string;
    }
  | { readonly type: 'subagent.event'; readonly child: BuiltChild; readonly event: AgentEvent };

export interface RunBatchOptions {
  readonly delegationId: string;
  readonly children: readonly BuiltChild[];
  /** Children running at once (`delegation.max_concurrent_children`). */
  readonly maxConcurrent: number;
  readonly tracker: SubagentTracker;
  /** Lineage roots whose spawn tree holds these children (nearest first). */
  readonly owners: readonly string[];
  readonly home: string;
  /** `delegation.child_timeout_seconds` (0 = none). */
  readonly timeoutSeconds: number;
  /** `delegation.max_summary_chars` (0 = no hard ceiling). */
  readonly maxSummaryChars: number;
  /** The parent's remaining context (tokens) when the batch was started, for the summary budget. */
  readonly headroomTokens?: number | undefined;
  /** Aborts every child (a parent interrupt, `interruptAll`); unstarted ones report `interrupted`. */
  readonly signal?: AbortSignal | undefined;
  /** The batch's number in this process, shown in completion lines. */
  readonly setNumber?: number;
  readonly heartbeatMs?: number;
  readonly onEvent?: (event: BatchEvent) => void;
  /** Each child's result as soon as it exists (the registry checkpoints partial results). */
  readonly onResult?: (result: ChildResult) => void | Promise<void>;
}

/** `✓|✗ [set n · i/N] <first 40 characters of the goal> (Ns) — <reason>` */
export function completionLine(result: ChildResult, setNumber: number, taskCount: number): string {
  const ok = result.status === 'completed';
  const reason = ok
    ? result.truncated
      ? 'hit its iteration limit'
      : 'done'
    : (result.error ?? result.status);
  return `${ok ? '✓' : '✗'} [set ${setNumber} · ${result.task_index + 1}/${taskCount}] ${result.goal.slice(0, 40)} (${Math.round(result.duration_seconds)}s) — ${reason}`;
}

let batchCounter = 0;

/**
 * Runs a batch: one child inline, several through a limiter of `maxConcurrent`; results sorted
 * by task index, then the summary budget applied (§6.7).
 */
export async function runBatch(options: RunBatchOptions): Promise<BatchResult> {
  const started = performance.now();
  const setNumber = options.setNumber ?? ++batchCounter;
  const total = options.children.length;
  const results: ChildResult[] = [];
  const lives = new Map<string, { live: LiveSubagent; controller: AbortController }>();
  for (const child of options.children) {
    const controller = new AbortController();
    const live: LiveSubagent = {
      subagentId: child.subagentId,
      delegationId: options.delegationId,
      goal: child.task.goal,
      taskIndex: child.taskIndex,
      owners: options.owners,
      startedMs: performance.now(),
      status: 'pending',
      steers: [],
      stopRequested: false,
      apiCalls: 0,
      maxIterations: child.agent.maxIterations,
      currentTool: undefined,
      lastActivityMs: performance.now(),
      abort: (reason) => controller.abort(reason),
    };
    lives.set(child.subagentId, { live, controller });
    options.tracker.add(live);
  }
  const abortAll = () => {
    for (const { controller } of lives.values())
      controller.abort(options.signal?.reason ?? 'interrupted');
  };
  if (options.signal?.aborted) abortAll();
  else options.signal?.addEventListener('abort', abortAll, { once: true });
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
  const heartbeat = setInterval(() => {
    for (const child of options.children) {
      const entry = lives.get(child.subagentId);
      if (entry?.live.status !== 'running') continue;
      const { live } = entry;
      options.onEvent?.({
        type: 'subagent.progress',
        child,
        text: `delegate_task: subagent running ${live.currentTool ?? 'model call'} (iteration ${live.apiCalls + 1}/${live.maxIterations})`,
      });
    }
  }, heartbeatMs);
  heartbeat.unref();

  let next = 0;
  const worker = async () => {
    for (;;) {
      const child = options.children[next];
      next += 1;
      if (!child) return;
      const entry = lives.get(child.subagentId) as {
        live: LiveSubagent;
        controller: AbortController;
      };
      let result: ChildResult;
      if (entry.controller.signal.aborted) {
        result = placeholderResult({
          taskIndex: child.taskIndex,
          subagentId: child.subagentId,
          goal: child.task.goal,
          model: child.model,
          status: 'interrupted',
          error: MESSAGES.parentInterrupted,
        });
      } else {
        entry.live.startedMs = performance.now();
        options.onEvent?.({ type: 'subagent.started', child, taskCount: total });
        result = await runChild({
          child,
          live: entry.live,
          timeoutSeconds: options.timeoutSeconds,
          signal: entry.controller.signal,
          home: options.home,
          onEvent: (event) => options.onEvent?.({ type: 'subagent.event', child, event }),
        });
      }
      options.tracker.remove(child.subagentId);
      results.push(result);
      options.onEvent?.({
        type: 'subagent.completed',
        child,
        result,
        line: completionLine(result, setNumber, total),
      });
      try {
        await options.onResult?.(result);
      } catch {
        // A failed partial checkpoint costs only crash recovery detail, never the result.
      }
    }
  };
  try {
    const workers = Math.max(1, Math.min(options.maxConcurrent, total));
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    clearInterval(heartbeat);
    options.signal?.removeEventListener('abort', abortAll);
    for (const child of options.children) options.tracker.remove(child.subagentId);
  }
  results.sort((left, right) => left.task_index - right.task_index);
  await applySummaryBudget(results, {
    maxSummaryChars: options.maxSummaryChars,
    headroomTokens: options.headroomTokens,
    home: options.home,
  });
  return {
    results,
    total_duration_seconds: Math.round((performance.now() - started) / 10) / 100,
  };
}

/**
 * Per-summary cap = min(`max_summary_chars`, dynamic budget), where the dynamic budget is half
 * the parent's remaining context shared among the summaries (4 characters per token, at least
 * 2,000). An over-cap summary keeps its head (¾) and tail (¼) around a `[SUMMARY TRUNCATED …]`
 * footer, and the whole text is spilled to `cache/delegation/`.
 */
export async function applySummaryBudget(
  results: ChildResult[],
  options: { maxSummaryChars: number; headroomTokens?: number | undefined; home: string },
): Promise<void> {
  const count = Math.max(1, results.length);
  const dynamic =
    options.headroomTokens === undefined
      ? Number.POSITIVE_INFINITY
      : Math.max(
          SUMMARY_FLOOR_CHARS,
          Math.floor(((options.headroomTokens * SUMMARY_HEADROOM_SHARE) / count) * CHARS_PER_TOKEN),
        );
  const cap = Math.min(
    options.maxSummaryChars > 0 ? options.maxSummaryChars : Number.POSITIVE_INFINITY,
    dynamic,
  );
  if (!Number.isFinite(cap)) return;
  for (const result of results) {
    const summary = result.summary;
    if (summary === null || summary.length <= cap) continue;
    let fullPath: string | undefined;
    try {
      const folder = path.join(options.home, ...SUMMARY_SPILL_DIR);
      await mkdir(folder, { recursive: true });
      fullPath = path.join(folder, `subagent-summary-${result.task_index}-${Date.now()}.txt`);
      await writeFile(fullPath, summary, { mode: 0o600 });
    } catch {
      fullPath = undefined;
    }
    result.summary = truncateSummary(summary, cap, fullPath);
    result.summary_truncated = true;
    if (fullPath) result.summary_full_path = fullPath;
  }
}

/** ~75 % head and ~25 % tail of `text` within `cap` characters, with a footer saying so. */
export function truncateSummary(text: string, cap: number, fullPath?: string): string {
  const footer = `\n\n[SUMMARY TRUNCATED — ${cap} of ${text.length} characters shown${fullPath ? `; full text: ${fullPath}` : ''}]`;
  const room = Math.max(0, cap - footer.length - 7);
  const head = Math.floor(room * 0.75);
  const tail = room - head;
  return `${text.slice(0, head)}\n[…]\n${tail > 0 ? text.slice(-tail) : ''}${footer}`;
}
