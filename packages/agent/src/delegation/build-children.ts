import { randomBytes } from 'node:crypto';
import type { Agent } from '../loop/agent-types.js';
import { loadContextFiles } from '../prompt/system-prompt.js';
import { expandToolsets, resolveToolsetNames, toolsetNamed } from '../tools/toolsets.js';
import {
  DELEGATE_BLOCKED_TOOLS,
  DELEGATE_TASK_TOOL_NAME,
  DELEGATION_TOOLSET,
} from './delegation-limits.js';
import type { DelegationTask } from './normalize-tasks.js';
import type { ChildRuntime } from './resolve-child-runtime.js';

export type ChildRole = 'leaf' | 'orchestrator';

/** A subagent ready to run: its own agent and session, built in the caller's async context. */
export interface BuiltChild {
  readonly subagentId: string;
  readonly taskIndex: number;
  readonly task: DelegationTask;
  readonly agent: Agent;
  readonly sessionId: string;
  readonly role: ChildRole;
  readonly model: string;
  readonly toolsets: readonly string[];
}

export function newDelegationId(): string {
  return `deleg_${randomBytes(4).toString('hex')}`;
}

export function newSubagentId(taskIndex: number): string {
  return `sa-${taskIndex}-${randomBytes(4).toString('hex')}`;
}

/** Orchestrator iff orchestration is on and the child is not at the bottom of the tree (§6.4). */
export function childRole(parent: Agent): ChildRole {
  const delegation = parent.config.delegation;
  return delegation.orchestratorEnabled && parent.depth + 1 < delegation.maxSpawnDepth
    ? 'orchestrator'
    : 'leaf';
}

/**
 * The child's toolsets: the parent's (composites expanded), capped by
 * `delegation.default_toolsets`, with whole blocked toolsets removed; the blocked tools
 * themselves go to `disabled` so they are also subtracted from inside composites. An
 * orchestrator gets `delegation` back (and only `delegate_task` of the blocked tools).
 */
export function childToolsets(
  parent: Agent,
  role: ChildRole,
): { toolsets: string[]; disabled: string[] } {
  const names = parent.options.toolsets ?? resolveToolsetNames(parent.config, parent.platform);
  const expanded = expandToolsets(names);
  let selected = [...expanded.toolsets, ...expanded.tools];
  const ceiling = parent.config.delegation.defaultToolsets;
  if (ceiling && ceiling.length > 0) {
    const allowed = expandToolsets(ceiling);
    selected = selected.filter((name) => allowed.toolsets.has(name) || allowed.tools.has(name));
  }
  const blocked = new Set<string>(
    role === 'orchestrator'
      ? DELEGATE_BLOCKED_TOOLS.filter((name) => name !== DELEGATE_TASK_TOOL_NAME)
      : DELEGATE_BLOCKED_TOOLS,
  );
  const wholeBlocked = (name: string) => {
    const toolset = toolsetNamed(name);
    return toolset?.tools.every((tool) => blocked.has(tool)) ?? false;
  };
  selected = selected.filter((name) => !blocked.has(name) && !wholeBlocked(name));
  if (role === 'orchestrator' && !selected.includes(DELEGATION_TOOLSET))
    selected.push(DELEGATION_TOOLSET);
  const disabled = [...(parent.options.disabledToolsets ?? []), ...blocked];
  return { toolsets: selected, disabled };
}

export const SUBAGENT_INTRO =
  'You are a focused subagent. Another agent delegated one task to you: work on it on your own with the tools you have, then report back. You cannot ask the user anything.';

/**
 * The child's system prompt (§6.4), shared scaffold first so siblings share a cacheable prefix:
 * intro, workspace path, the workspace's context files as binding conventions, how to finish,
 * orchestrator notes, and last the caller's context. The goal is the first user message.
 */
export async function buildChildSystemPrompt(input: {
  cwd: string;
  context: string;
  role: ChildRole;
  depth: number;
  maxSpawnDepth: number;
}): Promise<string> {
  const sections = [
    SUBAGENT_INTRO,
    `WORKSPACE PATH: ${input.cwd}\nWork in this folder: resolve relative paths against it, and use it (not /workspace or any other guess) when you name files.`,
  ];
  const files = await loadContextFiles(input.cwd);
  if (files.length > 0)
    sections.push(
      [
        'The workspace defines these conventions; they are binding for your work:',
        ...files.map(
          (file) =>
            `## ${file.name}\n\n${file.content}${file.truncated ? '\n\n[… truncated]' : ''}`,
        ),
      ].join('\n\n'),
    );
  sections.push(
    'When you are done, reply with a tight summary — it is all the delegating agent sees of your work: what you did, what you found, the files you changed (full paths), and any issues or open questions. Never assume /workspace/... exists; name the real paths you used.',
  );
  if (input.role === 'orchestrator')
    sections.push(
      [
        'You may delegate with delegate_task when parts of the task are large and independent; do small or sequential work yourself, and pass each child everything it needs.',
        `NOTE: You are at depth ${input.depth}. The delegation tree is capped at max_spawn_depth=${input.maxSpawnDepth}. Children you spawn at the last level are leaves and cannot delegate further.`,
      ].join('\n'),
    );
  sections.push(`CONTEXT:\n${input.context.trim() === '' ? '(none given)' : input.context}`);
  return sections.join('\n\n');
}

/**
 * Builds one child agent and its session row per task, in the caller's async context (its home
 * scope and identity stay with the children). Sessions hang off `parentSessionId` with
 * `parent_edge: delegate`, source `subagent`, hidden from session lists.
 */
export async function buildChildren(input: {
  parent: Agent;
  tasks: readonly DelegationTask[];
  runtime: ChildRuntime;
  parentSessionId: string | undefined;
  cwd: string;
}): Promise<BuiltChild[]> {
  const { parent, runtime } = input;
  const delegation = parent.config.delegation;
  const role = childRole(parent);
  const { toolsets, disabled } = childToolsets(parent, role);
  const autoApprove = delegation.subagentAutoApprove;
  const children: BuiltChild[] = [];
  for (const [taskIndex, task] of input.tasks.entries()) {
    const systemPrompt = await buildChildSystemPrompt({
      cwd: input.cwd,
      context: task.context,
      role,
      depth: parent.depth + 1,
      maxSpawnDepth: delegation.maxSpawnDepth,
    });
    const agent = parent.createChild({
      route: runtime.route,
      fallbackRoutes: runtime.fallbackRoutes,
      toolsets,
      disabledToolsets: disabled,
      systemPrompt,
      platform: 'subagent',
      maxIterations: delegation.maxIterations,
      ...(delegation.compressionThresholdTokens > 0
        ? { compressionThresholdTokens: delegation.compressionThresholdTokens }
        : {}),
      cwd: input.cwd,
      oneShot: false,
      // Subagents never ask anyone: approve once when configured to, else deny.
      approve: () => (autoApprove ? 'once' : 'deny'),
    });
    // Hidden from session lists (a subagent's run is not a conversation of the user's); its id is
    // in the result, so its transcript stays one lookup away.
    const session = await agent.createSession({
      source: 'subagent',
      model: runtime.route.model,
      cwd: input.cwd,
      title: null,
      hidden: true,
      ...(input.parentSessionId
        ? { parentSessionId: input.parentSessionId, parentEdge: 'delegate' as const }
        : {}),
    });
    children.push({
      subagentId: newSubagentId(taskIndex),
      taskIndex,
      task,
      agent,
      sessionId: session.id,
      role,
      model: runtime.route.model,
      toolsets,
    });
  }
  return children;
}
