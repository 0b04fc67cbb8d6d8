import * as v from 'valibot';
import { defineTool } from '../tools/define-tool.js';
import { delegateTask } from './delegate-task.js';
import {
  buildDelegateTaskDescription,
  buildDelegateTaskParameters,
} from './delegate-task-schema.js';
import { DELEGATE_TASK_TOOL_NAME, DELEGATION_TOOLSET } from './delegation-limits.js';

/**
 * Fields a model may send but never decides: the config owns toolsets, iterations and roles;
 * `background` follows depth; ACP commands and routing credentials are internal only.
 */
export const HIDDEN_DELEGATE_FIELDS = [
  'toolsets',
  'max_iterations',
  'role',
  'background',
  'acp_command',
  'acp_args',
  'credentials_cfg',
  'credentialsCfg',
  'fallback_providers',
] as const;

/**
 * `delegate_task` (toolset `delegation`): the model's way to hand work to subagents. Its
 * description and schema are rebuilt for each agent (live concurrency number, whether children
 * may delegate). At depth 0 it runs in the background when the agent has an async registry.
 */
export const delegateTaskTool = defineTool({
  name: DELEGATE_TASK_TOOL_NAME,
  toolset: DELEGATION_TOOLSET,
  description: 'Hand work to isolated subagents; only their final summaries come back.',
  parameters: v.record(v.string(), v.unknown()),
  definition: ({ config, depth }) => ({
    description: buildDelegateTaskDescription(config.delegation, { depth }),
    parameters: buildDelegateTaskParameters(config.delegation),
  }),
  run: async (args, context) => {
    const visible: Record<string, unknown> = { ...args };
    for (const field of HIDDEN_DELEGATE_FIELDS) delete visible[field];
    const result = await delegateTask(visible, {
      parent: context.agent,
      // Top-level delegations run in the background; orchestrators wait for their workers.
      background: context.depth === 0,
      sessionId: context.sessionId,
      origin: {
        sessionKey: context.origin.sessionKey,
        originUiSessionId: context.origin.uiSessionId,
        originSessionId: context.sessionId,
        parentSessionId: context.sessionId,
      },
      cwd: context.cwd,
      signal: context.signal,
      emit: context.emit,
      runId: context.runId,
    });
    if ('error' in result && typeof result.error === 'string' && Object.keys(result).length === 1)
      throw new Error(result.error);
    return result;
  },
});
