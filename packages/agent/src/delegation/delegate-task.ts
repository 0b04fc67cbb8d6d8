import { estimateTokens } from '../compression/estimate-tokens.js';
import type { AgentEvent } from '../events.js';
import type { Agent } from '../loop/agent-types.js';
import { loadMessages, rowsToMessages } from '../loop/transcript.js';
import { DEFAULT_CONTEXT_LENGTH } from '../model/provider-catalog.js';
import type {
  AsyncDelegationRegistry,
  AsyncUnit,
  DelegationOrigin,
  ResumeUnitRequest,
} from './async-registry.js';
import { type BuiltChild, buildChildren, newDelegationId } from './build-children.js';
import type { BatchResult, ChildResult } from './child-result.js';
import {
  type DelegationResumeSpec,
  type DelegationTaskRecord,
  type ResumableTaskRecord,
  unitGoal,
} from './completion-event.js';
import { DELEGATE_TASK_TOOL_NAME } from './delegation-limits.js';
import { DELEGATION_NOTES, DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';
import { writePartialResults } from './ledger-files.js';
import { type DelegationTask, normalizeTasks } from './normalize-tasks.js';
import {
  type ChildRuntime,
  type DelegationRoutingConfig,
  delegationRouting,
  resolveChildRuntime,
} from './resolve-child-runtime.js';
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

function ownerKey(agent: Agent, sessionId: string | undefined): string {
  if (!sessionId) return 'no-session';
  return agent.store.getSession(sessionId)?.lineageRootId ?? sessionId;
}

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
        where: 'auxiliary.review',
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
                options,
                sessionId,
                cwd,
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
    ...(units.length > 1 ? { units: dispatched } : {}),
    subagent_ids: children.map((child) => child.subagentId),
    control_hint: DELEGATION_NOTES.controlHint,
    ...(inlineResults.length > 0 ? { inline_results: inlineResults } : {}),
    ...(runtime.warnings.length > 0 ? { warnings: runtime.warnings } : {}),
  };
}

type UnitBatchOptions = Omit<Parameters<typeof runBatch>[0], 'delegationId' | 'children'>;

/** What every batch of one delegating agent and session shares. */
async function unitBatchOptions(
  parent: Agent,
  input: {
    tracker: SubagentTracker;
    owner: string;
    sessionId: string | undefined;
    runtime: ChildRuntime;
  },
): Promise<UnitBatchOptions> {
  const delegation = parent.config.delegation;
  return {
    maxConcurrent: delegation.maxConcurrentChildren,
    tracker: input.tracker,
    owners: [input.owner, ...ancestorOwners(parent, input.sessionId)],
    home: parent.home,
    timeoutSeconds: delegation.childTimeoutSeconds,
    maxSummaryChars: delegation.maxSummaryChars,
    headroomTokens: await parentHeadroom(
      parent,
      input.sessionId,
      input.runtime.route.contextLength,
    ),
  };
}

const KEY_FIELDS = new Set(['api_key', 'apiKey']);

/** A fallback entry as the ledger may hold it: its own key left out. */
function withoutKey(entry: unknown): unknown {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  return Object.fromEntries(Object.entries(entry).filter(([key]) => !KEY_FIELDS.has(key)));
}

/** What another process needs to run a unit again (no secrets: keys come from the live config). */
function resumeSpec(
  parent: Agent,
  input: {
    children: readonly BuiltChild[];
    options: DelegateTaskOptions;
    sessionId: string | undefined;
    cwd: string;
  },
): DelegationResumeSpec {
  const credentials = input.options.credentialsCfg;
  return {
    tasks: input.children.map(
      ({ task }): ResumableTaskRecord => ({
        goal: task.goal,
        context: task.context,
        ...(task.outputSchema ? { output_schema: task.outputSchema } : {}),
        ...(task.images ? { images: task.images } : {}),
        ...(task.group !== undefined ? { group: task.group } : {}),
      }),
    ),
    credentials: credentials
      ? {
          provider: credentials.provider,
          model: credentials.model,
          baseUrl: credentials.baseUrl,
          apiMode: credentials.apiMode,
          hadApiKey: credentials.apiKey !== '',
        }
      : null,
    fallback_providers: credentials ? (input.options.fallbackProviders ?? []).map(withoutKey) : [],
    session_id: input.sessionId ?? null,
    cwd: input.cwd,
    platform: parent.platform,
    model: parent.config.model.model,
  };
}

/**
 * The key a resumed unit's pinned route runs with: the live `auxiliary.review` key when that block
 * still names the same route (the ledger never holds keys), else none — the provider's own secret
 * then applies, as for any route without a key.
 */
function liveRouteKey(
  parent: Agent,
  credentials: NonNullable<DelegationResumeSpec['credentials']>,
): string {
  if (!credentials.hadApiKey) return '';
  const live = parent.config.auxiliary.review;
  const provider = live.provider.toLowerCase() === 'auto' ? '' : live.provider;
  return provider === credentials.provider &&
    live.model === credentials.model &&
    live.baseUrl === credentials.baseUrl
    ? live.apiKey
    : '';
}

/**
 * Rebuilds a resumable unit from its ledger record so it can run again after its process stopped:
 * the same delegation id, origin and session binding, task indexes and subagent ids, fresh child
 * agents and sessions. `parent` is an agent of the same profile (its tools, config and registry).
 * Throws an `Error` whose message says why the unit cannot run again.
 */
export async function resumeDelegation(
  request: ResumeUnitRequest,
  options: { readonly parent: Agent },
): Promise<AsyncUnit> {
  const { parent } = options;
  const registry = parent.options.delegations;
  if (!registry) throw new Error('the agent has no delegation registry');
  const spec = request.task.resume;
  if (!spec || spec.tasks.length === 0) throw new Error('the ledger holds no task to run again');
  const delegation = parent.config.delegation;
  const routing: DelegationRoutingConfig = spec.credentials
    ? {
        provider: spec.credentials.provider,
        model: spec.credentials.model,
        baseUrl: spec.credentials.baseUrl,
        apiMode: spec.credentials.apiMode,
        apiKey: liveRouteKey(parent, spec.credentials),
        fallbackProviders: spec.fallback_providers,
        where: 'auxiliary.review',
      }
    : delegationRouting(delegation);
  const runtime = resolveChildRuntime(parent, routing);
  if ('error' in runtime) throw new Error(runtime.error);
  const tasks: DelegationTask[] = spec.tasks.map((task) => ({
    goal: task.goal,
    context: task.context,
    ...(task.output_schema ? { outputSchema: task.output_schema } : {}),
    ...(task.images ? { images: task.images } : {}),
    ...(task.group !== undefined ? { group: task.group } : {}),
  }));
  const sessionId = spec.session_id ?? undefined;
  const built = await buildChildren({
    parent,
    tasks,
    runtime,
    parentSessionId: request.origin.parentSessionId ?? undefined,
    cwd: spec.cwd,
  });
  // The same task indexes and subagent ids as the run that stopped: the completion reads as one unit.
  const children = built.map((child, position) => ({
    ...child,
    taskIndex: request.task.task_indexes[position] ?? child.taskIndex,
    subagentId: request.task.subagent_ids[position] ?? child.subagentId,
  }));
  const batchOptions = await unitBatchOptions(parent, {
    tracker: registry.subagents,
    owner: ownerKey(parent, sessionId),
    sessionId,
    runtime,
  });
  return makeUnit({
    unitId: request.delegationId,
    slotKey: request.delegationId,
    children,
    group: request.task.group,
    origin: request.origin,
    registry,
    batchOptions,
    task: request.task,
  });
}

/**
 * The lineage roots of the conversations above `sessionId` in a spawn tree (a subagent's session
 * hangs off its parent's with `parent_edge: delegate`), so an orchestrator's own children are
 * also in the tree of the conversation that spawned the orchestrator.
 */
function ancestorOwners(parent: Agent, sessionId: string | undefined): string[] {
  const owners: string[] = [];
  let current = sessionId ? parent.store.getSession(sessionId) : undefined;
  for (let depth = 0; current && depth < 16; depth += 1) {
    if (current.parentEdge !== 'delegate' || !current.parentSessionId) break;
    const above = parent.store.getSession(current.parentSessionId);
    if (!above) break;
    owners.push(above.lineageRootId);
    current = above;
  }
  return owners;
}

async function parentHeadroom(
  parent: Agent,
  sessionId: string | undefined,
  childContextLength: number | undefined,
): Promise<number | undefined> {
  if (!sessionId || !parent.store.getSession(sessionId)) return undefined;
  let contextLength = childContextLength ?? DEFAULT_CONTEXT_LENGTH;
  try {
    contextLength = parent.route().contextLength ?? contextLength;
  } catch {
    // The child's own window stands in.
  }
  const used = estimateTokens(rowsToMessages(loadMessages(parent.store, sessionId)));
  return Math.max(0, contextLength - used);
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

function makeUnit(input: {
  unitId: string;
  slotKey: string;
  children: BuiltChild[];
  group: string | undefined;
  origin: DelegationOrigin;
  registry: AsyncDelegationRegistry;
  batchOptions: UnitBatchOptions;
  /** Makes the unit resumable: how to run it again. */
  resume?: DelegationResumeSpec;
  /** The ledger's record of a unit being run again (kept as it is). */
  task?: DelegationTaskRecord;
}): AsyncUnit {
  const { unitId, children, registry } = input;
  const goals = children.map((child) => child.task.goal);
  const first = children[0] as BuiltChild;
  const task: DelegationTaskRecord = input.task ?? {
    goal: unitGoal(goals),
    goals,
    context: children.length === 1 ? first.task.context : joinContexts(children),
    toolsets: first.toolsets,
    role: first.role,
    model: first.model,
    origin_session_id: input.origin.originSessionId ?? null,
    task_indexes: children.map((child) => child.taskIndex),
    subagent_ids: children.map((child) => child.subagentId),
    ...(input.group ? { group: input.group } : {}),
    ...(input.resume ? { resumable: true, resume_count: 0, resume: input.resume } : {}),
  };
  const finished: ChildResult[] = [];
  return {
    delegationId: unitId,
    slotKey: input.slotKey,
    task,
    origin: input.origin,
    maxConcurrent: input.batchOptions.maxConcurrent,
    run: (signal): Promise<BatchResult> =>
      runBatch({
        ...input.batchOptions,
        delegationId: unitId,
        children,
        signal,
        onEvent: (event) => registry.report({ type: 'subagent', delegationId: unitId, event }),
        onResult: async (result) => {
          finished.push(result);
          if (children.length > 1) await writePartialResults(registry.home, unitId, finished);
        },
      }).then((batch) => (input.group ? { ...batch, group: input.group } : batch)),
    progress: () => {
      const live = registry.subagents.forDelegation(unitId);
      let apiCalls = 0;
      let lastActivityMs = 0;
      let currentTool: string | undefined;
      for (const subagent of live) {
        apiCalls += subagent.apiCalls;
        lastActivityMs = Math.max(lastActivityMs, subagent.lastActivityMs);
        currentTool ??= subagent.currentTool;
      }
      return { apiCalls, currentTool, lastActivityMs, inTool: currentTool !== undefined };
    },
    partialResults: () => finished,
  };
}

function joinContexts(children: readonly BuiltChild[]): string {
  return children
    .map((child) => `[task ${child.taskIndex + 1}] ${child.task.context || '(none)'}`)
    .join('\n');
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
