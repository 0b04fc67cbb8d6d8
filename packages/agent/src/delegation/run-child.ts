import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentEvent } from '../events.js';
import type { TurnResult } from '../loop/agent-types.js';
import { EMPTY_RESPONSE_SENTINEL } from '../loop/turn-outcome.js';
import type { BuiltChild } from './build-children.js';
import { checkOutputSchema, parseJsonAnswer } from './check-output-schema.js';
import type { ChildResult, ChildStatus, ToolTraceEntry } from './child-result.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES, missedSteerNote } from './delegation-messages.js';
import type { LiveSubagent } from './subagent-tracker.js';

export interface RunChildOptions {
  readonly child: BuiltChild;
  readonly live: LiveSubagent;
  /** Inactivity cap in seconds (`delegation.child_timeout_seconds`); 0 = none. */
  readonly timeoutSeconds: number;
  /** Aborted by `live.abort` (stop, interrupt, timeout). */
  readonly signal: AbortSignal;
  /** For the timeout diagnostic log (`<home>/logs/subagent-timeout-<id>-<ts>.log`). */
  readonly home: string;
  /** Every event of the child's turns (progress tracking, relays). */
  readonly onEvent?: (event: AgentEvent) => void;
}

const TARGET_KEYS = ['path', 'file_path', 'paths', 'workdir', 'url', 'pattern', 'name', 'command'];

function summarizeArguments(raw: string): ToolTraceEntry['input_summary'] {
  let parsed: unknown;
  try {
    parsed = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    return { argument_keys: [], targets: [] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { argument_keys: [], targets: [] };
  const record = parsed as Record<string, unknown>;
  const targets: string[] = [];
  for (const key of TARGET_KEYS) {
    const value = record[key];
    if (typeof value === 'string' && value !== '') targets.push(value.slice(0, 120));
    else if (Array.isArray(value))
      for (const entry of value) if (typeof entry === 'string') targets.push(entry.slice(0, 120));
  }
  return { argument_keys: Object.keys(record), targets: targets.slice(0, 8) };
}

function seconds(ms: number): number {
  return Math.round(ms / 10) / 100;
}

/** The correction turn's message when the final answer does not match `output_schema`. */
export function schemaCorrectionMessage(
  schema: Readonly<Record<string, unknown>>,
  errors: readonly string[],
): string {
  return [
    'Your final answer does not match the required output schema:',
    ...errors.map((error) => `- ${error}`),
    '',
    'Reply again with only a JSON value that matches this schema (no prose, no code fence):',
    JSON.stringify(schema),
  ].join('\n');
}

/**
 * Runs one subagent to its result entry (§6.6): the goal as its first user message, an optional
 * inactivity timeout, one correction turn when the answer misses its `output_schema`, steers
 * delivered with tool results (a steer never read is reported as `missed_steer`). Never throws.
 */
export async function runChild(options: RunChildOptions): Promise<ChildResult> {
  const { child, live } = options;
  const started = performance.now();
  const trace: ToolTraceEntry[] = [];
  const traceByCall = new Map<string, ToolTraceEntry>();
  const tokens = { input: 0, output: 0 };
  let apiCalls = 0;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  let resolveTimeout: (() => void) | undefined;
  const timeoutMs = options.timeoutSeconds * 1000;
  const armTimeout = () => {
    if (timeoutMs <= 0 || timedOut) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      live.abort('timeout');
      resolveTimeout?.();
    }, timeoutMs);
    timer.unref();
  };
  const onEvent = (event: AgentEvent) => {
    live.lastActivityMs = performance.now();
    armTimeout();
    switch (event.type) {
      case 'message.completed':
        apiCalls += 1;
        live.apiCalls = apiCalls;
        break;
      case 'tool.started': {
        live.currentTool = event.name;
        const entry: ToolTraceEntry = {
          tool: event.name,
          args_bytes: Buffer.byteLength(event.arguments),
          input_summary: summarizeArguments(event.arguments),
          result_bytes: 0,
          status: 'running',
        };
        trace.push(entry);
        traceByCall.set(event.callId, entry);
        break;
      }
      case 'tool.completed':
      case 'tool.failed': {
        live.currentTool = undefined;
        const entry = traceByCall.get(event.callId);
        if (entry) {
          entry.result_bytes = Buffer.byteLength(
            event.type === 'tool.completed' ? event.result : event.error,
          );
          entry.status = event.type === 'tool.completed' ? 'ok' : 'error';
        }
        break;
      }
      case 'run.completed':
      case 'run.failed':
      case 'run.interrupted':
        tokens.input += event.usage.inputTokens;
        tokens.output += event.usage.outputTokens;
        break;
    }
    options.onEvent?.(event);
  };
  const control = {
    takeSteer: () => live.steers.shift(),
    shouldStop: () => live.stopRequested,
  };
  const timeoutPromise = new Promise<void>((resolve) => {
    resolveTimeout = resolve;
  });
  // A promise cannot be killed: on timeout the child is aborted and this run stops waiting;
  // the turn settles on its own (the deferred close).
  const turn = async (message: string): Promise<TurnResult | 'timeout'> => {
    const running = child.agent.runTurn({
      sessionId: child.sessionId,
      message,
      signal: options.signal,
      onEvent,
      control,
    });
    running.catch(() => {});
    return Promise.race([running, timeoutPromise.then(() => 'timeout' as const)]);
  };

  live.status = 'running';
  armTimeout();
  const base = {
    task_index: child.taskIndex,
    subagent_id: child.subagentId,
    goal: child.task.goal,
    model: child.model,
    tool_trace: trace,
    cost_usd: null,
    cost_status: 'unknown' as const,
    session_id: child.sessionId,
  };
  try {
    const firstMessage =
      child.task.images && child.task.images.length > 0
        ? `${child.task.goal}\n\nImages to look at (paths or URLs):\n${child.task.images.map((image) => `- ${image}`).join('\n')}`
        : child.task.goal;
    let result: TurnResult | 'timeout';
    try {
      result = await turn(firstMessage);
    } catch (error) {
      return finishMissedSteers(live, {
        ...base,
        status: 'error',
        summary: null,
        api_calls: apiCalls,
        duration_seconds: seconds(performance.now() - started),
        exit_reason: 'error',
        truncated: false,
        tokens,
        error: error instanceof Error ? error.message : String(error),
        failure_reason: 'error',
      });
    }
    if (result === 'timeout') return await timeoutResult();
    let schemaFields: Partial<ChildResult> = {};
    const schema = child.task.outputSchema;
    if (schema && result.status === 'completed') {
      let errors = schemaErrors(result.finalResponse, schema);
      let retries = 0;
      if (errors.length > 0 && !live.stopRequested) {
        retries = 1;
        const corrected = await turn(schemaCorrectionMessage(schema, errors)).catch(
          () => undefined,
        );
        if (corrected === 'timeout') return await timeoutResult();
        if (corrected) {
          result = corrected;
          errors =
            corrected.status === 'completed'
              ? schemaErrors(corrected.finalResponse, schema)
              : errors;
        }
      }
      schemaFields = {
        schema_valid: errors.length === 0,
        schema_retries: retries,
        ...(errors.length > 0 ? { schema_errors: errors } : {}),
      };
    }
    const summaryText = result.finalResponse;
    const usable = summaryText.trim() !== '' && summaryText.trim() !== EMPTY_RESPONSE_SENTINEL;
    let status: ChildStatus;
    let error: string | undefined;
    let failureReason: string | undefined;
    if (result.status === 'interrupted') {
      status = 'interrupted';
    } else if (result.status === 'failed') {
      status = 'failed';
      error = result.error?.message ?? 'the subagent failed';
      failureReason = result.error?.code ?? 'error';
    } else if (!usable) {
      status = 'failed';
      error = MESSAGES.childFailedEmpty;
      failureReason = 'empty_summary';
    } else if (schemaFields.schema_valid === false) {
      status = 'failed';
      error = `the final answer does not match output_schema: ${(schemaFields.schema_errors ?? []).join('; ')}`;
      failureReason = 'schema_invalid';
    } else {
      status = 'completed';
    }
    return finishMissedSteers(live, {
      ...base,
      status,
      summary: usable ? summaryText : null,
      api_calls: apiCalls,
      duration_seconds: seconds(performance.now() - started),
      exit_reason:
        result.status === 'interrupted'
          ? 'interrupted'
          : result.status === 'failed'
            ? 'error'
            : result.exitReason === 'max_iterations'
              ? 'max_iterations'
              : 'completed',
      truncated: result.exitReason === 'max_iterations',
      tokens,
      ...schemaFields,
      ...(error === undefined ? {} : { error }),
      ...(failureReason === undefined ? {} : { failure_reason: failureReason }),
    });
  } finally {
    if (timer) clearTimeout(timer);
    live.status = 'finishing';
    live.currentTool = undefined;
  }

  async function timeoutResult(): Promise<ChildResult> {
    const phase = apiCalls === 0 ? 'before_first_llm_call' : 'after_llm_calls';
    const elapsed = seconds(performance.now() - started);
    let diagnosticPath: string | undefined;
    if (apiCalls === 0) {
      // No model answer at all: leave a note an operator can read (endpoint slow or unreachable?).
      const folder = path.join(options.home, 'logs');
      diagnosticPath = path.join(folder, `subagent-timeout-${child.subagentId}-${Date.now()}.log`);
      try {
        await mkdir(folder, { recursive: true });
        await writeFile(
          diagnosticPath,
          [
            `subagent ${child.subagentId} (task ${child.taskIndex}) timed out before its first model answer`,
            `goal: ${child.task.goal}`,
            `model: ${child.model}`,
            `session: ${child.sessionId}`,
            `timeout: ${options.timeoutSeconds}s of inactivity, after ${elapsed}s`,
          ].join('\n'),
          { mode: 0o600 },
        );
      } catch {
        diagnosticPath = undefined;
      }
    }
    return finishMissedSteers(live, {
      ...base,
      status: 'timeout',
      summary: null,
      api_calls: apiCalls,
      duration_seconds: elapsed,
      exit_reason: 'interrupted',
      truncated: false,
      tokens,
      error: MESSAGES.childTimeout(options.timeoutSeconds),
      failure_reason: 'timeout',
      timeout_seconds: options.timeoutSeconds,
      timed_out_after_seconds: elapsed,
      timeout_phase: phase,
      ...(diagnosticPath ? { diagnostic_path: diagnosticPath } : {}),
    });
  }
}

function schemaErrors(answer: string, schema: Readonly<Record<string, unknown>>): string[] {
  const parsed = parseJsonAnswer(answer);
  if ('error' in parsed) return [parsed.error];
  return checkOutputSchema(parsed.value, schema);
}

/** Steers still queued when the child ended are reported, not silently dropped. */
function finishMissedSteers(live: LiveSubagent, result: ChildResult): ChildResult {
  if (live.steers.length === 0) return result;
  const missed = live.steers.splice(0);
  const notes = missed.map(missedSteerNote).join('\n');
  return {
    ...result,
    missed_steer: missed,
    summary: result.summary === null ? notes : `${result.summary}\n\n${notes}`,
  };
}
