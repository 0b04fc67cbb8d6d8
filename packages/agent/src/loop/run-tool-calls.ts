import { TOOL_ERROR_MESSAGES } from '../errors.js';
import type { AgentEvent } from '../events.js';
import type { ToolCall } from '../model/chat-message.js';
import { errorContent, executeTool, type Tool, type ToolOutcome } from '../tools/define-tool.js';
import type { ToolContext } from '../tools/tool-context.js';

export interface ToolCallResult {
  readonly call: ToolCall;
  readonly outcome: ToolOutcome;
}

export interface RunToolCallsOptions {
  readonly calls: readonly ToolCall[];
  /** The tools this turn offers, by name. */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly signal: AbortSignal;
  readonly contextFor: (call: ToolCall) => ToolContext;
  readonly emit: (event: DistributiveOmit<AgentEvent, 'runId' | 'sessionId'>) => void;
  /** Records one result as soon as it exists (the agent stores it now or with its next write). */
  readonly persist: (result: ToolCallResult) => Promise<void>;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * Groups calls in order: consecutive read-only calls form one batch that runs concurrently;
 * every other call runs alone, in order. Results come back in call order. Once the signal
 * aborts, calls that have not started are answered `interrupted` without running.
 */
export function planBatches(
  calls: readonly ToolCall[],
  tools: ReadonlyMap<string, Tool>,
): ToolCall[][] {
  const batches: ToolCall[][] = [];
  let readOnly: ToolCall[] = [];
  for (const call of calls) {
    if (tools.get(call.function.name)?.readOnly) {
      readOnly.push(call);
      continue;
    }
    if (readOnly.length > 0) batches.push(readOnly);
    readOnly = [];
    batches.push([call]);
  }
  if (readOnly.length > 0) batches.push(readOnly);
  return batches;
}

export async function runToolCalls(options: RunToolCallsOptions): Promise<ToolCallResult[]> {
  const results: ToolCallResult[] = [];
  const runOne = async (call: ToolCall): Promise<ToolCallResult> => {
    const name = call.function.name;
    if (options.signal.aborted) {
      const result = {
        call,
        outcome: {
          ok: false,
          content: errorContent(TOOL_ERROR_MESSAGES.interrupted),
          error: TOOL_ERROR_MESSAGES.interrupted,
        },
      };
      await options.persist(result);
      return result;
    }
    const started = performance.now();
    options.emit({
      type: 'tool.started',
      callId: call.id,
      name,
      arguments: call.function.arguments,
    });
    const tool = options.tools.get(name);
    const outcome: ToolOutcome = tool
      ? await executeTool(tool, call.function.arguments, options.contextFor(call))
      : {
          ok: false,
          content: errorContent(TOOL_ERROR_MESSAGES.unknownTool(name)),
          error: TOOL_ERROR_MESSAGES.unknownTool(name),
        };
    const durationMs = Math.round(performance.now() - started);
    const result = { call, outcome };
    await options.persist(result);
    if (outcome.ok)
      options.emit({
        type: 'tool.completed',
        callId: call.id,
        name,
        result: outcome.content,
        durationMs,
      });
    else
      options.emit({
        type: 'tool.failed',
        callId: call.id,
        name,
        error: outcome.error ?? outcome.content,
        durationMs,
      });
    return result;
  };
  for (const batch of planBatches(options.calls, options.tools)) {
    results.push(...(await Promise.all(batch.map(runOne))));
  }
  return results;
}
