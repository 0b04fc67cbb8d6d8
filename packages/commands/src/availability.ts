import type { CommandDef } from './command-def.js';
import { COMMAND_REGISTRY } from './registry.js';
import { resolveCommand } from './resolve-command.js';
import { UnknownCommandSurfaceError } from './unknown-command-surface-error.js';

/**
 * Where a command is typed: `cli` (the terminal chat and terminal front ends of the TUI bridge),
 * `desktop` (desktop and web front ends of the TUI bridge), `gateway` (every chat platform).
 */
export type CommandSurface = 'cli' | 'desktop' | 'gateway';

export const COMMAND_SURFACES: readonly CommandSurface[] = Object.freeze([
  'cli',
  'desktop',
  'gateway',
]);

/** Canonical names of `cliOnly` commands whose config gate is on. */
export type ConfigGates = ReadonlySet<string>;

export interface AvailabilityOptions {
  /** From `resolveConfigGates(config)`; none open when omitted. */
  readonly gates?: ConfigGates | undefined;
}

function gatewayKnown(command: CommandDef): boolean {
  return !command.cliOnly || command.gatewayConfigGate !== null;
}

/**
 * Names and aliases the gateway recognises as built-in commands: everything not `cliOnly`, plus
 * `cliOnly` commands that a config gate can open. Decides whether a `command:<name>` hook fires.
 */
export const GATEWAY_KNOWN_COMMANDS: ReadonlySet<string> = new Set(
  COMMAND_REGISTRY.filter(gatewayKnown).flatMap((command) => [command.name, ...command.aliases]),
);

/** A built-in gateway command (any alias, any spelling `resolveCommand` accepts) or a plugin command. */
export function isGatewayKnownCommand(
  name: string,
  options: { readonly pluginCommands?: Iterable<string> | undefined } = {},
): boolean {
  const command = resolveCommand(name);
  if (command !== null && gatewayKnown(command)) return true;
  const key = name.trim().replace(/^\//, '').toLowerCase();
  for (const plugin of options.pluginCommands ?? []) if (plugin.toLowerCase() === key) return true;
  return false;
}

const FALSE_WORDS = new Set(['', '0', 'false', 'no', 'off', 'none', 'null']);

/**
 * Truthiness for config values: an empty string, list or mapping is off (JavaScript would call the
 * last two truthy), and so are the words `false`, `no`, `off`, `0` however they were quoted.
 */
function isOn(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (value === true) return true;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return !FALSE_WORDS.has(value.trim().toLowerCase());
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

function valueAt(config: unknown, dotPath: string): unknown {
  let node: unknown = config;
  for (const key of dotPath.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The canonical names whose `gatewayConfigGate` is on in `config` — the raw `config.yaml` mapping
 * (`loadConfig().raw` from `@hermes/config`). Reads only; never throws.
 */
export function resolveConfigGates(config: unknown): ConfigGates {
  const open = new Set<string>();
  for (const command of COMMAND_REGISTRY)
    if (command.gatewayConfigGate !== null && isOn(valueAt(config, command.gatewayConfigGate)))
      open.add(command.name);
  return open;
}

/** Whether a chat platform offers `command`: not `cliOnly`, or `cliOnly` with its gate open. */
export function isGatewayAvailable(command: CommandDef, gates: ConfigGates = new Set()): boolean {
  if (!command.cliOnly) return true;
  return command.gatewayConfigGate !== null && gates.has(command.name);
}

function checkSurface(surface: string): asserts surface is CommandSurface {
  if (!(COMMAND_SURFACES as readonly string[]).includes(surface))
    throw new UnknownCommandSurfaceError(surface);
}

/** Whether `command` is offered on `surface`. Throws `UnknownCommandSurfaceError` for other surfaces. */
export function isCommandAvailable(
  command: CommandDef,
  surface: CommandSurface,
  options: AvailabilityOptions = {},
): boolean {
  checkSurface(surface);
  if (surface === 'gateway') return isGatewayAvailable(command, options.gates);
  return !command.gatewayOnly;
}

/**
 * The commands a surface offers, in registry order: `gateway` → the gateway-available ones; `cli`
 * and `desktop` → all but `gatewayOnly`. Any other surface throws
 * `UnknownCommandSurfaceError` (`Unknown command surface: <surface>`).
 */
export function availableCommands(
  surface: CommandSurface,
  options: AvailabilityOptions = {},
): readonly CommandDef[] {
  checkSurface(surface);
  return COMMAND_REGISTRY.filter((command) => isCommandAvailable(command, surface, options));
}
