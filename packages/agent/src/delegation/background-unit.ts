import { estimateTokens } from '../compression/estimate-tokens.js';
import type { Agent } from '../loop/agent-types.js';
import { loadMessages, rowsToMessages } from '../loop/transcript.js';
import { DEFAULT_CONTEXT_LENGTH } from '../model/provider-catalog.js';
import type { AsyncDelegationRegistry } from './async-registry.js';
import type { AsyncUnit, DelegationOrigin } from './async-unit.js';
import type { BuiltChild } from './build-children.js';
import type { BatchResult, ChildResult } from './child-result.js';
import {
  type DelegationResumeSpec,
  type DelegationTaskRecord,
  unitGoal,
} from './completion-event.js';
import { writePartialResults } from './ledger-files.js';
import type { ChildRuntime } from './resolve-child-runtime.js';
import { runBatch } from './run-batch.js';
import type { SubagentTracker } from './subagent-tracker.js';

/*
 * A background unit of built children, as the registry runs it: shared by a fresh dispatch
 * (`delegateTask`) and a unit run again after a restart (`resumeDelegation`).
 */

/** Whose spawn tree a delegation belongs to: the delegating session's lineage root. */
export function ownerKey(agent: Agent, sessionId: string | undefined): string {
  if (!sessionId) return 'no-session';
  return agent.store.getSession(sessionId)?.lineageRootId ?? sessionId;
}

export type UnitBatchOptions = Omit<Parameters<typeof runBatch>[0], 'delegationId' | 'children'>;

/** What every batch of one delegating agent and session shares. */
export async function unitBatchOptions(
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

export function makeUnit(input: {
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
