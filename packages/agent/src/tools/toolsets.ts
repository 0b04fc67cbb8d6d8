import type { HermesConfig } from '@hermes/config';
import type { ToolRegistry } from './tool-registry.js';

export interface ToolsetDefinition {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly tools: readonly string[];
}

/** The named toolsets (the reference's names). A toolset's tools appear only when registered. */
export const TOOLSETS: Readonly<Record<string, ToolsetDefinition>> = {
  file: {
    name: 'file',
    label: 'Files',
    description: 'Read, write, patch and search files in the working directory',
    tools: ['read_file', 'write_file', 'patch', 'search_files'],
  },
  terminal: {
    name: 'terminal',
    label: 'Terminal',
    description: 'Run shell commands (dangerous ones need approval)',
    tools: ['terminal'],
  },
  skills: {
    name: 'skills',
    label: 'Skills',
    description: 'Load skills from $HERMES_HOME/skills',
    tools: ['skill_view'],
  },
  todo: {
    name: 'todo',
    label: 'Todo',
    description: 'Keep a task list for the conversation',
    tools: ['todo'],
  },
  delegation: {
    name: 'delegation',
    label: 'Delegation',
    description: 'Hand work to subagents',
    tools: ['delegate_task'],
  },
  safe: {
    name: 'safe',
    label: 'Read-only',
    description: 'Only tools that change nothing',
    tools: ['read_file', 'search_files', 'skill_view', 'todo'],
  },
};

/** What every `hermes-<platform>` composite expands to. */
export const CORE_TOOLSETS = ['file', 'terminal', 'skills', 'todo', 'delegation'] as const;

/** `cli` → `hermes-cli`, `api_server` → `hermes-api-server`, `telegram` → `hermes-telegram`. */
export function defaultToolsetFor(platform: string): string {
  return `hermes-${platform.replaceAll('_', '-')}`;
}

/** The table's toolset of that name — own keys only, so `constructor` or `__proto__` is none. */
export function toolsetNamed(name: string): ToolsetDefinition | undefined {
  return Object.hasOwn(TOOLSETS, name) ? TOOLSETS[name] : undefined;
}

function isComposite(name: string): boolean {
  return name.startsWith('hermes-');
}

export interface ExpandedToolsets {
  /** Toolset names (a `hermes-*` composite contributes the core toolsets). */
  readonly toolsets: ReadonlySet<string>;
  /** Names that are not in the table: tool names, or custom toolsets named by tools. */
  readonly tools: ReadonlySet<string>;
}

/** Splits a list of names into toolsets (composites expanded) and single tools. */
export function expandToolsets(names: readonly string[]): ExpandedToolsets {
  const toolsets = new Set<string>();
  const tools = new Set<string>();
  for (const name of names) {
    if (isComposite(name)) for (const core of CORE_TOOLSETS) toolsets.add(core);
    else if (toolsetNamed(name)) toolsets.add(name);
    else tools.add(name);
  }
  return { toolsets, tools };
}

/** Whether a tool belongs to an expanded selection: by name, its own toolset, or a table toolset listing it. */
export function selectsTool(
  selection: ExpandedToolsets,
  tool: { name: string; toolset: string },
): boolean {
  // A name outside the table may be a custom toolset (a tool's own `toolset`).
  if (selection.tools.has(tool.name) || selection.tools.has(tool.toolset)) return true;
  if (selection.toolsets.has(tool.toolset)) return true;
  for (const name of selection.toolsets)
    if (toolsetNamed(name)?.tools.includes(tool.name)) return true;
  return false;
}

/** The toolset names a platform's turns use: `platform_toolsets.<p>`, the CLI's `toolsets`, or the default composite. */
export function resolveToolsetNames(config: HermesConfig, platform: string): string[] {
  const explicit = config.platformToolsets[platform];
  if (explicit) return [...explicit];
  if (platform === 'cli') return [...config.toolsets];
  return [defaultToolsetFor(platform)];
}

export interface ResolveToolsOptions {
  /** Toolset (or tool) names to use instead of the platform's (delegation narrows with this). */
  readonly toolsets?: readonly string[];
  /** Toolset or tool names removed after expansion (besides `agent.disabled_toolsets`). */
  readonly disabled?: readonly string[];
}

/** The registered tools a turn on `platform` may call, in registration order. */
export function resolveToolNames(
  config: HermesConfig,
  platform: string,
  registry: ToolRegistry,
  options: ResolveToolsOptions = {},
): string[] {
  const enabled = expandToolsets(options.toolsets ?? resolveToolsetNames(config, platform));
  const disabled = expandToolsets([...config.agent.disabledToolsets, ...(options.disabled ?? [])]);
  return registry
    .list()
    .filter((tool) => selectsTool(enabled, tool) && !selectsTool(disabled, tool))
    .map((tool) => tool.name);
}

export interface ToolsetInfo {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  /** In the platform's resolved toolsets (and not disabled). */
  readonly enabled: boolean;
  /** Its required keys are present (no built-in toolset needs any). */
  readonly configured: boolean;
  /** At least one of its tools is registered in this agent. */
  readonly available: boolean;
  readonly reasonCode: 'ready' | 'disabled' | 'not_configured';
  /** Registered tool names, sorted. */
  readonly tools: readonly string[];
}

/** The toolsets a platform sees, for `GET /v1/toolsets` and `hermes tools list`. */
export function listToolsets(
  config: HermesConfig,
  platform: string,
  registry: ToolRegistry,
): ToolsetInfo[] {
  const active = new Set(resolveToolNames(config, platform, registry));
  return Object.values(TOOLSETS).map((toolset) => {
    const tools = registry
      .list()
      .filter((tool) => tool.toolset === toolset.name || toolset.tools.includes(tool.name))
      .map((tool) => tool.name)
      .sort();
    const available = tools.length > 0;
    const enabled = available && tools.every((name) => active.has(name));
    return {
      name: toolset.name,
      label: toolset.label,
      description: toolset.description,
      enabled,
      configured: available,
      available,
      reasonCode: !available ? 'not_configured' : enabled ? 'ready' : 'disabled',
      tools,
    };
  });
}
