import type { DelegationConfig } from '@hermes/config';
import { MAX_TASK_IMAGES } from './delegation-limits.js';

export interface DelegateTaskDefinitionOptions {
  /** The delegating agent's depth (0 for the agent that talks to the user). */
  readonly depth: number;
}

/** Whether children spawned at this depth may delegate again (they become orchestrators). */
export function childrenMayDelegate(delegation: DelegationConfig, depth: number): boolean {
  return delegation.orchestratorEnabled && depth + 1 < delegation.maxSpawnDepth;
}

/**
 * The model-facing description, rebuilt for each agent. Limits live in the parameter
 * descriptions only; this text carries the contracts (isolation, how results come back, when to
 * use it, the rules) and stays under 2,200 characters.
 */
export function buildDelegateTaskDescription(
  delegation: DelegationConfig,
  options: DelegateTaskDefinitionOptions,
): string {
  const returns = delegation.independentCompletions
    ? 'each ungrouped task / group returns on its own'
    : 'one message per call';
  const restricted = childrenMayDelegate(delegation, options.depth)
    ? 'clarify, memory, send_message or cronjob'
    : 'clarify, memory, send_message, cronjob or delegate_task';
  return [
    'Hand work to isolated subagents. Each starts with no memory of this conversation and its own tools; only its final summary comes back to you.',
    '',
    `Sessions without a consumer for later results join the subagents and return their results inline. Otherwise the work runs in the background and results re-enter as a new message (${returns}). Results arrive only between turns: end your turn — never wait, sleep or poll for them.`,
    '',
    '`action` controls live children: spawn (default), list, steer (subagent_id + message), stop (subagent_id).',
    '',
    'USE FOR: independent research, reviews, multi-file investigations, parallel work that would flood your context.',
    'DO NOT USE FOR: execute_code or a single tool call you can make yourself, anything that needs the user, or durable/scheduled work (use cronjob, or terminal(background=True, notify=True)). /stop and /new halt subagents.',
    '',
    'RULES: children know nothing — pass everything they need in goal and context (paths, constraints, decisions, and the language to answer in, e.g. "respond in Chinese"). Summaries are SELF-REPORTS: verify the handles they name (files, commands, URLs) before relying on them. Children cannot close tracked work for you.',
    '',
    `Children cannot call ${restricted}.`,
    'Children use your model unless delegation.provider / delegation.model pins another.',
  ].join('\n');
}

/** The JSON Schema of the arguments (no `maxItems` on `tasks`; hidden fields never appear). */
export function buildDelegateTaskParameters(
  delegation: DelegationConfig,
): Readonly<Record<string, unknown>> {
  const taskProperties: Record<string, unknown> = {
    goal: {
      type: 'string',
      description:
        'What this subagent must achieve, stated completely — it sees nothing else of this conversation.',
    },
    context: {
      type: 'string',
      description:
        'Everything it needs: file paths, constraints, what was decided, what to return, the language to answer in.',
    },
    output_schema: {
      type: 'object',
      description:
        'Optional JSON Schema its final answer must match (it gets one chance to correct a mismatch).',
    },
    images: {
      type: 'array',
      items: { type: 'string' },
      description: `Optional image paths or URLs for it to look at (at most ${MAX_TASK_IMAGES}).`,
    },
  };
  if (delegation.independentCompletions)
    taskProperties.group = {
      type: 'string',
      description:
        'Tasks with the same group come back together as one message; every ungrouped task comes back on its own.',
    };
  return {
    type: 'object',
    properties: {
      tasks: {
        type: 'array',
        minItems: 1,
        description: `Subagents to spawn, up to ${delegation.maxConcurrentChildren} in parallel for this user (set via delegation.max_concurrent_children) — one entry per independent piece of work. Required when spawning.`,
        items: {
          type: 'object',
          properties: taskProperties,
          required: ['goal'],
        },
      },
      action: {
        type: 'string',
        enum: ['spawn', 'list', 'steer', 'stop'],
        default: 'spawn',
        description:
          "spawn (default) starts the tasks; list shows this conversation's live subagents; steer sends one a message (subagent_id, message); stop ends one at its next step (subagent_id).",
      },
      subagent_id: {
        type: 'string',
        description: 'The subagent to steer or stop (from the spawn result or action=list).',
      },
      message: {
        type: 'string',
        description: 'For steer: the text the subagent reads with its next tool result.',
      },
    },
  };
}
