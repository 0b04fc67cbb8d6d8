import {
  BUILTIN_TOOLS,
  createToolRegistry,
  expandToolsets,
  listToolsets,
  resolveToolsetNames,
  TOOLSETS,
  type ToolsetInfo,
  toolsetNamed,
} from '@hermes/agent';
import { loadConfig, setConfigValue } from '@hermes/config';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { listArg } from '../context.js';
import { usageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

const PLATFORM_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

function platformOf(options: CommandOptions): string {
  const platform =
    typeof options.platform === 'string' ? options.platform.trim().toLowerCase() : 'cli';
  if (!PLATFORM_NAME.test(platform)) {
    throw usageError(
      `invalid platform "${platform}"`,
      'Use a platform name such as cli, api_server, tui, telegram',
    );
  }
  return platform;
}

function toolsetsFor(home: string, platform: string) {
  const { config, raw } = loadConfig({ home });
  const registry = createToolRegistry(BUILTIN_TOOLS);
  const configured = (raw.platform_toolsets as Record<string, unknown> | undefined)?.[platform];
  return {
    config,
    toolsets: listToolsets(config, platform, registry),
    source: Array.isArray(configured)
      ? `platform_toolsets.${platform}`
      : platform === 'cli' && Array.isArray(raw.toolsets)
        ? 'toolsets'
        : 'default',
  };
}

function printToolsets(
  context: CommandContext,
  platform: string,
  toolsets: readonly ToolsetInfo[],
  source: string,
  extra: Record<string, unknown> = {},
): void {
  const { output } = context;
  if (output.json) {
    output.printJson({
      platform,
      source,
      ...extra,
      toolsets: toolsets.map((toolset) => ({
        name: toolset.name,
        label: toolset.label,
        description: toolset.description,
        enabled: toolset.enabled,
        available: toolset.available,
        reason_code: toolset.reasonCode,
        tools: toolset.tools,
      })),
    });
    return;
  }
  const styles = output.styles;
  output.table(
    [
      {
        header: 'TOOLSET',
        value: (row: ToolsetInfo) => row.name,
        style: (text) => styles.bold(text),
      },
      {
        header: 'STATE',
        value: (row) => (row.enabled ? 'enabled' : row.available ? 'disabled' : 'unavailable'),
        style: (text, row) => (row.enabled ? styles.green(text) : styles.dim(text)),
      },
      { header: 'TOOLS', value: (row) => row.tools.join(', ') || '-' },
      { header: 'WHAT', value: (row) => row.description, flexible: true },
    ],
    toolsets,
  );
  output.note(
    styles.dim(
      `platform ${platform}, from ${source === 'default' ? 'the default for the platform' : source}`,
    ),
  );
}

export async function toolsList(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const platform = platformOf(options);
  const { toolsets, source } = toolsetsFor(context.home, platform);
  printToolsets(context, platform, toolsets, source);
  return EXIT.ok;
}

export function toolsEdit(action: 'enable' | 'disable') {
  return async (
    context: CommandContext,
    args: Positional,
    options: CommandOptions,
  ): Promise<number> => {
    const platform = platformOf(options);
    const names = listArg(args, 0).map((name) => name.trim().toLowerCase());
    // `constructor` or `toString` is on every object but is no toolset.
    const unknown = names.filter((name) => !toolsetNamed(name));
    if (unknown.length > 0) {
      throw usageError(
        `unknown toolset${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
        `Known toolsets: ${Object.keys(TOOLSETS).join(', ')}`,
      );
    }
    const { config } = loadConfig({ home: context.home });
    // The platform's current list with composites expanded, so one member can be removed.
    const current = expandToolsets(resolveToolsetNames(config, platform));
    const selected = new Set(current.toolsets);
    for (const name of names) {
      if (action === 'enable') selected.add(name);
      else selected.delete(name);
    }
    const next = [
      ...Object.keys(TOOLSETS).filter((name) => selected.has(name)),
      ...[...current.tools].sort(),
    ];
    const changed =
      selected.size !== current.toolsets.size ||
      [...selected].some((name) => !current.toolsets.has(name));
    // Nothing to change leaves config.yaml (and a `hermes-<platform>` composite in it) alone.
    if (changed) setConfigValue(`platform_toolsets.${platform}`, next, context.home);
    const after = toolsetsFor(context.home, platform);
    const stillOn =
      action === 'disable'
        ? names.flatMap((name) => {
            const kept = keptTools(name, selected, current.tools);
            if (kept.tools.length === 0) {
              if (!current.toolsets.has(name))
                context.output.note(`${name} is already disabled on ${platform}.`);
              return [];
            }
            context.output.warn(
              current.toolsets.has(name)
                ? `${kept.tools.join(', ')} stay on through ${kept.providers.join(', ')} (disable those to turn them off)`
                : `${name} is not enabled on ${platform}; its tools stay on through ${kept.providers.join(', ')} (disable those to turn them off)`,
            );
            return [name];
          })
        : [];
    const blocked = names.filter(
      (name) => action === 'enable' && config.agent.disabledToolsets.includes(name),
    );
    for (const name of blocked) {
      context.output.warn(
        `${name} stays off: agent.disabled_toolsets lists it (remove it there to enable it)`,
      );
    }
    printToolsets(context, platform, after.toolsets, after.source, { [`${action}d`]: names });
    if (!context.output.json) {
      context.output.note(
        context.output.errorStyles.dim(
          'A running gateway picks this up on its next turn; hermes chat on its next start.',
        ),
      );
    }
    return blocked.length > 0 || stillOn.length > 0 ? EXIT.failure : EXIT.ok;
  };
}

/**
 * The tools of a disabled toolset that the rest of the selection still turns on, and which
 * toolsets (or single tool names) do: toolsets overlap (`safe` is read-only tools of `file`,
 * `skills` and `todo`), so taking one out need not turn its tools off.
 */
function keptTools(
  name: string,
  selected: ReadonlySet<string>,
  singleTools: ReadonlySet<string>,
): { tools: string[]; providers: string[] } {
  const own = toolsetNamed(name)?.tools ?? [];
  const providers = new Set<string>();
  const tools = own.filter((tool) => {
    let kept = false;
    for (const other of selected) {
      if (other !== name && toolsetNamed(other)?.tools.includes(tool)) {
        providers.add(other);
        kept = true;
      }
    }
    if (singleTools.has(tool)) {
      providers.add(tool);
      kept = true;
    }
    return kept;
  });
  return { tools, providers: [...providers] };
}
