import type { AgentEvent } from '../events.js';
import type { Agent } from '../loop/agent-types.js';
import type { AsyncDelegationRegistry } from './async-registry.js';
import type { DelegationOrigin } from './async-unit.js';
import { makeUnit, ownerKey, unitBatchOptions } from './background-unit.js';
import { type BuiltChild, buildChildren, newDelegationId } from './build-children.js';
import type { ChildResult } from './child-result.js';
import { CREDENTIALS_ROUTING_OWNER, DELEGATE_TASK_TOOL_NAME } from './delegation-limits.js';
import { DELEGATION_NOTES, DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';
import { normalizeTasks } from './normalize-tasks.js';
import {
  type DelegationRoutingConfig,
  delegationRouting,
  resolveChildRuntime,
} from './resolve-child-runtime.js';
import { resumeSpec } from './resume-delegation.js';
import { type BatchEvent, runBatch } from './run-batch.js';
import { processSubagents, type SubagentTracker } from './subagent-tracker.js';

/** A per-call routing owner (`auxiliary.review`): route **and** fallback chain. */
export interface DelegationCredentialsConfig {
  readonly provider: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly apiMode: string;
}

export interface DelegateTaskOptions {
  /** The delegating agent. */
  readonly parent: Agent | null | undefined;
  /** Run in the background (its completion re-enters the conversation later). Default false. */
  readonly background?: boolean;
  /**
   * The routing owner for this call instead of the `delegation` section — never model-facing.
   * `null`/absent: the `delegation` section decides (default: inherit the parent's route).
   */
  readonly credentialsCfg?: DelegationCredentialsConfig | null;
  /** The chain `credentialsCfg` owns (`[]`: no fallback). Ignored without `credentialsCfg`. */
  readonly fallbackProviders?: readonly unknown[];
  /** The delegating session: children's sessions hang off it and `list`/`steer`/`stop` are scoped to it. */
  readonly sessionId?: string;
  /** Routing identity stamped on the completion (defaults: the session id). */
  readonly origin?: DelegationOrigin;
  /** Children's working directory (default the parent's). */
  readonly cwd?: string;
  /** The parent's turn: an inline batch stops when it aborts. Background units ignore it. */
  readonly signal?: AbortSignal;
  /**
   * The work is safe to run again (an investigation such as a review): a background unit whose
   * process stops before it finishes — a crash, or a graceful shutdown — is run again from its
   * task by the next start of a registry that can resume (`resume` option; at most
   * `DELEGATION_MAX_RESUMES` times) instead of ending `unknown` / `interrupted`. Default false.
   */
  readonly resumable?: boolean;
  /** Receives `subagent.*` events of inline children (the parent turn's stream). */
  readonly emit?: (event: AgentEvent) => void;
  /** `runId` for those events. */
  readonly runId?: string;
}

/** The JSON object `delegate_task` answers with; a refusal is exactly `{ error }`. */
export type DelegateTaskResult = Readonly<Record<string, unknown>>;

function root(agent: Agent): Agent {
  let current = agent;
  while (current.options.parent) current = current.options.parent;
  return current;
}

const oneShotSpawned = new WeakMap<Agent, number>();

/**
 * `delegate_task` for model and non-model callers (§6.2–6.8). Validation runs in the reference's
 * order and every refusal is `{ error }` with its exact text; nothing is started then. Children
 * are built in the caller's async context. In the background (a registry on the parent, not a
 * one-shot run) it returns `{ status: 'dispatched', … }` at once; otherwise, or at capacity, it
 * runs the batch inline and returns `{ results, total_duration_seconds, note? }`.
 */
export async function delegateTask(
  args: Readonly<Record<string, unknown>>,
  options: DelegateTaskOptions,
): Promise<DelegateTaskResult> {
  const parent = options.parent;
  if (!parent) return { error: MESSAGES.noParent };
  const action = typeof args.action === 'string' ? args.action.trim().toLowerCase() : 'spawn';
  const registry = parent.options.delegations;
  const tracker: SubagentTracker = registry?.subagents ?? processSubagents;
  const owner = ownerKey(parent, options.sessionId);
  if (action === 'list' || action === 'steer' || action === 'stop')
    return controlAction(action, args, { tracker, owner, registry, sessionId: options.sessionId });
  if (action !== 'spawn' && action !== '')
    return { error: MESSAGES.unknownAction(String(args.action)) };
  if (!parent.tools.some((tool) => tool.name === DELEGATE_TASK_TOOL_NAME))
    return { error: MESSAGES.notAvailable };
  if (registry?.paused) return { error: MESSAGES.paused };
  const delegation = parent.config.delegation;
  if (parent.depth >= delegation.maxSpawnDepth)
    return { error: MESSAGES.depthLimit(parent.depth, delegation.maxSpawnDepth) };
  // A caller's max_iterations is ignored: delegation.max_iterations is authoritative.
  const routing: DelegationRoutingConfig = options.credentialsCfg
    ? {
        ...options.credentialsCfg,
        fallbackProviders: options.fallbackProviders ?? [],
        where: CREDENTIALS_ROUTING_OWNER,
      }
    : delegationRouting(delegation);
  const runtime = resolveChildRuntime(parent, routing);
  if ('error' in runtime) return { error: runtime.error };
  const normalized = normalizeTasks(args, delegation.maxConcurrentChildren);
  if ('error' in normalized) return { error: normalized.error };
  const { tasks } = normalized;
  const top = root(parent);
  if (top.options.oneShot && delegation.oneshotMaxChildren > 0) {
    const spawned = oneShotSpawned.get(top) ?? 0;
    if (spawned + tasks.length > delegation.oneshotMaxChildren)
      return { error: MESSAGES.oneshotExhausted(spawned, delegation.oneshotMaxChildren) };
    oneShotSpawned.set(top, spawned + tasks.length);
  }

  const sessionId = options.sessionId;
  const origin: Required<{ [K in keyof DelegationOrigin]: string | null }> = {
    sessionKey: options.origin?.sessionKey ?? sessionId ?? null,
    originUiSessionId: options.origin?.originUiSessionId ?? null,
    originSessionId: options.origin?.originSessionId ?? sessionId ?? null,
    parentSessionId: options.origin?.parentSessionId ?? sessionId ?? null,
  };
  const cwd = options.cwd ?? parent.cwd;
  const children = await buildChildren({
    parent,
    tasks,
    runtime,
    parentSessionId: origin.parentSessionId ?? undefined,
    cwd,
  });
  const delegationId = newDelegationId();
  const batchOptions = await unitBatchOptions(parent, { tracker, owner, sessionId, runtime });
  const emitInline = (event: BatchEvent) => {
    if (!options.emit) return;
    const base = { runId: options.runId ?? '', sessionId: sessionId ?? '' };
    if (event.type === 'subagent.started')
      options.emit({
        ...base,
        type: 'subagent.started',
        delegationId,
        subagentId: event.child.subagentId,
        taskIndex: event.child.taskIndex,
        taskCount: event.taskCount,
        goal: event.child.task.goal,
        model: event.child.model,
      });
    else if (event.type === 'subagent.progress')
      options.emit({
        ...base,
        type: 'subagent.progress',
        delegationId,
        subagentId: event.child.subagentId,
        text: event.text,
      });
    else if (event.type === 'subagent.completed')
      options.emit({
        ...base,
        type: 'subagent.completed',
        delegationId,
        subagentId: event.child.subagentId,
        taskIndex: event.child.taskIndex,
        status: event.result.status,
        line: event.line,
      });
  };
  const runInline = async (note?: string) => {
    const batch = await runBatch({
      ...batchOptions,
      delegationId,
      children,
      signal: options.signal,
      onEvent: emitInline,
    });
    return {
      delegation_id: delegationId,
      mode: 'sync',
      model: runtime.route.model,
      results: batch.results,
      total_duration_seconds: batch.total_duration_seconds,
      ...(runtime.warnings.length > 0 ? { warnings: runtime.warnings } : {}),
      ...(note ? { note } : {}),
    };
  };

  if (!options.background) return runInline();
  if (!registry || top.options.oneShot) return runInline(DELEGATION_NOTES.noAsync);

  const units = splitUnits(children, delegation.independentCompletions, delegationId);
  const dispatched: { delegation_id: string; group: string | null; task_indexes: number[] }[] = [];
  const inlineResults: ChildResult[] = [];
  for (const [position, unit] of units.entries()) {
    const outcome = await registry.dispatch(
      makeUnit({
        unitId: unit.id,
        slotKey: delegationId,
        children: unit.children,
        group: unit.group,
        origin,
        registry,
        batchOptions,
        ...(options.resumable
          ? {
              resume: resumeSpec(parent, {
                children: unit.children,
                credentialsCfg: options.credentialsCfg,
                fallbackProviders: options.fallbackProviders,
                sessionId,
                cwd,
                slotKey: delegationId,
              }),
            }
          : {}),
      }),
    );
    if (outcome.status === 'dispatched') {
      dispatched.push({
        delegation_id: unit.id,
        group: unit.group ?? null,
        task_indexes: unit.children.map((child) => child.taskIndex),
      });
      continue;
    }
    if (position === 0) {
      if (!outcome.capacity) return { error: outcome.error };
      return runInline(DELEGATION_NOTES.atCapacity(registry.running));
    }
    // A later unit that finds the pool full runs here, inline.
    const batch = await runBatch({
      ...batchOptions,
      delegationId: unit.id,
      children: unit.children,
      signal: options.signal,
      onEvent: emitInline,
    });
    inlineResults.push(...batch.results);
  }
  return {
    status: 'dispatched',
    mode: 'background',
    count: children.length,
    delegation_id: delegationId,
    goals: children.map((child) => child.task.goal),
    model: runtime.route.model,
    note: DELEGATION_NOTES.dispatched(children.length),
    // Whenever the call was split (even into one unit), its completions carry the units' ids.
    ...(delegation.independentCompletions ? { units: dispatched } : {}),
    subagent_ids: children.map((child) => child.subagentId),
    control_hint: DELEGATION_NOTES.controlHint,
    ...(inlineResults.length > 0 ? { inline_results: inlineResults } : {}),
    ...(runtime.warnings.length > 0 ? { warnings: runtime.warnings } : {}),
  };
}

interface PlannedUnit {
  readonly id: string;
  readonly group: string | undefined;
  readonly children: BuiltChild[];
}

/** One unit per call; with independent completions, one per group and one per ungrouped task. */
function splitUnits(
  children: readonly BuiltChild[],
  independent: boolean,
  delegationId: string,
): PlannedUnit[] {
  if (!independent) return [{ id: delegationId, group: undefined, children: [...children] }];
  const units: PlannedUnit[] = [];
  const groups = new Map<string, BuiltChild[]>();
  for (const child of children) {
    const group = child.task.group;
    if (group === undefined) {
      units.push({ id: '', group: undefined, children: [child] });
      continue;
    }
    let members = groups.get(group);
    if (!members) {
      members = [];
      groups.set(group, members);
      units.push({ id: '', group, children: members });
    }
    members.push(child);
  }
  return units.map((unit, index) => ({ ...unit, id: `${delegationId}-${index + 1}` }));
}

function controlAction(
  action: 'list' | 'steer' | 'stop',
  args: Readonly<Record<string, unknown>>,
  scope: {
    tracker: SubagentTracker;
    owner: string;
    registry: AsyncDelegationRegistry | undefined;
    sessionId: string | undefined;
  },
): DelegateTaskResult {
  if (action === 'list') {
    return {
      action: 'list',
      subagents: scope.tracker.list(scope.owner),
      ...(scope.registry && scope.sessionId
        ? { background: scope.registry.list({ originSessionId: scope.sessionId }) }
        : {}),
    };
  }
  const id = typeof args.subagent_id === 'string' ? args.subagent_id.trim() : '';
  if (id === '') return { error: MESSAGES.subagentIdRequired(action) };
  const subagent = scope.tracker.find(scope.owner, id);
  if (!subagent) return { error: MESSAGES.subagentUnknown(id) };
  if (action === 'stop') {
    subagent.stopRequested = true;
    return { action: 'stop', status: 'stopping', subagent_id: id };
  }
  const message = typeof args.message === 'string' ? args.message.trim() : '';
  if (message === '') return { error: MESSAGES.steerMessageRequired };
  if (subagent.status === 'finishing' || subagent.stopRequested)
    return {
      action: 'steer',
      status: 'rejected',
      subagent_id: id,
      error: MESSAGES.steerNotAccepted(id),
    };
  subagent.steers.push(message);
  return { action: 'steer', status: 'queued', subagent_id: id };
}
