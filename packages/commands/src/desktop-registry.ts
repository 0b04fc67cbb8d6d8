import type { CommandDef, DesktopDisposition } from './command-def.js';
import { COMMAND_REGISTRY } from './registry.js';

/**
 * The desktop front end's slash table: `"/name"` and every `"/alias"` → its disposition (`null` =
 * offered). Commands only chat platforms have are `messaging` unless they say otherwise.
 */
export function desktopSurfaceRegistry(): Readonly<Record<string, DesktopDisposition | null>> {
  return buildDesktopSurfaceRegistry(COMMAND_REGISTRY);
}

/** @internal Exported for tests: the registry's gateway-only commands all name a disposition. */
export function buildDesktopSurfaceRegistry(
  registry: readonly CommandDef[],
): Readonly<Record<string, DesktopDisposition | null>> {
  const table: Record<string, DesktopDisposition | null> = {};
  for (const command of registry) {
    const disposition = command.desktop ?? (command.gatewayOnly ? 'messaging' : null);
    for (const name of [command.name, ...command.aliases]) table[`/${name}`] = disposition;
  }
  return Object.freeze(table);
}
