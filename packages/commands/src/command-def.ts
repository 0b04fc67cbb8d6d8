import { inferArgumentMode } from './argument-mode.js';

/** Help-menu category of a command. */
export type CommandCategory = 'Session' | 'Configuration' | 'Tools & Skills' | 'Info' | 'Exit';

/** The categories in the order help shows them. */
export const COMMAND_CATEGORIES: readonly CommandCategory[] = Object.freeze([
  'Session',
  'Configuration',
  'Tools & Skills',
  'Info',
  'Exit',
]);

/**
 * What the gateway does with a command that arrives while the agent is answering:
 * - `dispatch`: run it now (through its `busyHandler` when it has one);
 * - `reject`: answer that the agent is running;
 * - `interrupt_then_dispatch`: stop the running turn, then run it (`/new`, `/stop`).
 */
export type BusyPolicy = 'reject' | 'dispatch' | 'interrupt_then_dispatch';

export const VALID_BUSY_POLICIES: readonly BusyPolicy[] = Object.freeze([
  'dispatch',
  'reject',
  'interrupt_then_dispatch',
]);

/** How a desktop composer offers a command's arguments. */
export type ArgumentMode = 'options' | 'text' | 'mixed';

/**
 * Desktop disposition: `null` = offered in the desktop slash menu; `hidden`; or the reason it is not
 * offered there (`terminal`: terminal-only; `messaging`: chat platforms only; `settings`: the
 * desktop has a settings screen for it; `advanced`; `composer-voice`).
 */
export type DesktopDisposition =
  | 'hidden'
  | 'terminal'
  | 'messaging'
  | 'settings'
  | 'advanced'
  | 'composer-voice';

/** One slash command. Registry entries are frozen; compare by `name`. */
export interface CommandDef {
  /** Canonical name, lower-case, without the slash. */
  readonly name: string;
  /** One sentence a person understands, in English. */
  readonly description: string;
  readonly category: CommandCategory;
  /** Other names that resolve to this command (`reset` for `new`). */
  readonly aliases: readonly string[];
  /** Placeholder shown after the name in help, e.g. `[review instructions]`; `''` when none. */
  readonly argsHint: string;
  /** Tab-completable first arguments. */
  readonly subcommands: readonly string[];
  /** Terminal surfaces (CLI, TUI) only. */
  readonly cliOnly: boolean;
  /** Chat platforms (the gateway) only. */
  readonly gatewayOnly: boolean;
  /**
   * A `config.yaml` dot-path; when its value is truthy, this `cliOnly` command is also available in
   * the gateway (see `resolveConfigGates`).
   */
  readonly gatewayConfigGate: string | null;
  readonly busyPolicy: BusyPolicy;
  /** Key of the gateway's mid-run handler for this command (`queue`, `steer`, …). */
  readonly busyHandler: string | null;
  /** Key into a surface's shared executor table (`profile`, `version`, `gateway_help`). */
  readonly execute: string | null;
  /** Explicit value, or inferred from `subcommands` and `argsHint` (see `inferArgumentMode`). */
  readonly argumentMode: ArgumentMode | null;
  readonly desktop: DesktopDisposition | null;
}

/** What a registry entry is written as; everything but name, description and category defaults. */
export interface CommandInput {
  readonly name: string;
  readonly description: string;
  readonly category: CommandCategory;
  readonly aliases?: readonly string[];
  readonly argsHint?: string;
  readonly subcommands?: readonly string[];
  readonly cliOnly?: boolean;
  readonly gatewayOnly?: boolean;
  readonly gatewayConfigGate?: string;
  readonly busyPolicy?: BusyPolicy;
  readonly busyHandler?: string;
  readonly execute?: string;
  readonly argumentMode?: ArgumentMode;
  readonly desktop?: DesktopDisposition;
}

/** A frozen `CommandDef` with every default applied and the argument mode inferred. */
export function defineCommand(input: CommandInput): CommandDef {
  const subcommands = Object.freeze([...(input.subcommands ?? [])]);
  const argsHint = input.argsHint ?? '';
  return Object.freeze({
    name: input.name,
    description: input.description,
    category: input.category,
    aliases: Object.freeze([...(input.aliases ?? [])]),
    argsHint,
    subcommands,
    cliOnly: input.cliOnly ?? false,
    gatewayOnly: input.gatewayOnly ?? false,
    gatewayConfigGate: input.gatewayConfigGate ?? null,
    busyPolicy: input.busyPolicy ?? 'reject',
    busyHandler: input.busyHandler ?? null,
    execute: input.execute ?? null,
    argumentMode: inferArgumentMode({
      argumentMode: input.argumentMode ?? null,
      subcommands,
      argsHint,
    }),
    desktop: input.desktop ?? null,
  });
}
