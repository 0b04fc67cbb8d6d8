import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import type { Tool } from './define-tool.js';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  has(name: string): boolean;
  /** In registration order. */
  list(): readonly Tool[];
}

/** An explicit list of tools (no import side effects); a name registered twice is refused. */
export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name))
      throw new AgentError({
        code: 'duplicate_tool',
        message: AGENT_ERROR_MESSAGES.duplicateTool(tool.name),
      });
    byName.set(tool.name, tool);
  }
  const list = Object.freeze([...byName.values()]);
  return {
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    list: () => list,
  };
}
