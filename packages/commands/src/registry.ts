import { type CommandDef, defineCommand } from './command-def.js';

/**
 * Every built-in slash command, in the order help and platform menus list them. This table is the
 * single source of truth for names, aliases, availability and busy behaviour on every surface (the
 * CLI, the TUI bridge and desktop, every chat platform); `docs/slash-commands.md` is generated from
 * it (`pnpm --filter @hermes/commands docs:generate`).
 */
export const COMMAND_REGISTRY: readonly CommandDef[] = Object.freeze([
  // Session
  defineCommand({
    name: 'new',
    description: 'Start a new conversation; the current one stays in your history',
    category: 'Session',
    aliases: ['reset'],
    busyPolicy: 'interrupt_then_dispatch',
  }),
  defineCommand({
    name: 'start',
    description: 'Say hello and show how to talk to this bot (chat apps send it when a chat opens)',
    category: 'Session',
    gatewayOnly: true,
    desktop: 'messaging',
  }),
  defineCommand({
    name: 'clear',
    description: 'Clear the screen and start a new conversation',
    category: 'Session',
    cliOnly: true,
  }),
  defineCommand({
    name: 'stop',
    description: 'Stop the answer in progress and the background agents it started',
    category: 'Session',
    busyPolicy: 'interrupt_then_dispatch',
  }),
  defineCommand({
    name: 'retry',
    description: 'Send your last message again to get a fresh answer',
    category: 'Session',
  }),
  defineCommand({
    name: 'undo',
    description: 'Remove your last message and its answer from this conversation',
    category: 'Session',
  }),
  defineCommand({
    name: 'queue',
    description: 'Hold a message and send it as soon as the current answer finishes',
    category: 'Session',
    aliases: ['q'],
    argsHint: '<message>',
    busyPolicy: 'dispatch',
    busyHandler: 'queue',
  }),
  defineCommand({
    name: 'steer',
    description: 'Add guidance to the answer in progress without stopping it',
    category: 'Session',
    argsHint: '<guidance>',
    busyPolicy: 'dispatch',
    busyHandler: 'steer',
  }),
  defineCommand({
    name: 'review',
    description: 'Spawn an independent subagent to review the work just discussed (PR, code, docs)',
    category: 'Session',
    argsHint: '[review instructions]',
  }),
  defineCommand({
    name: 'agents',
    description: 'Show the background agents working for this conversation',
    category: 'Session',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'history',
    description: 'Show the messages of this conversation so far',
    category: 'Session',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'sessions',
    description: 'List your recent conversations (switch with /resume)',
    category: 'Session',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'resume',
    description: 'Switch to an earlier conversation by its id or title',
    category: 'Session',
    argsHint: '<session id or title>',
  }),
  defineCommand({
    name: 'title',
    description: "Show this conversation's title, or give it a new one",
    category: 'Session',
    aliases: ['rename'],
    argsHint: '[new title]',
  }),
  defineCommand({
    name: 'compress',
    description: 'Summarise older messages to free up room in the context window',
    category: 'Session',
    aliases: ['compact'],
    argsHint: '[what to keep in focus]',
  }),
  // Configuration
  defineCommand({
    name: 'model',
    description: 'Show the model answering here, or switch to another one',
    category: 'Configuration',
    argsHint: '[model id]',
  }),
  defineCommand({
    name: 'models',
    description: 'List the models your provider offers',
    category: 'Configuration',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'reasoning',
    description: 'Show or set how much the model thinks before answering (reasoning effort)',
    category: 'Configuration',
    aliases: ['effort'],
    argsHint: '[none|minimal|low|medium|high|xhigh]',
    subcommands: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'],
  }),
  defineCommand({
    name: 'prompt',
    description: 'Show, set or clear extra instructions the agent follows in this conversation',
    category: 'Configuration',
    argsHint: '[text | clear]',
    subcommands: ['clear'],
  }),
  defineCommand({
    name: 'verbose',
    description: 'Choose how much tool activity is shown while the agent works',
    category: 'Configuration',
    argsHint: '[off|new|all|verbose]',
    subcommands: ['off', 'new', 'all', 'verbose'],
    cliOnly: true,
    gatewayConfigGate: 'display.tool_progress_command',
    desktop: 'settings',
  }),
  // Tools & Skills
  defineCommand({
    name: 'tools',
    description: 'List the tools the agent can use here',
    category: 'Tools & Skills',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'skills',
    description: 'List the skills installed for this profile',
    category: 'Tools & Skills',
    cliOnly: true,
    gatewayConfigGate: 'skills.write_approval',
    busyPolicy: 'dispatch',
  }),
  // Info
  defineCommand({
    name: 'help',
    description: 'Show the commands you can use here',
    category: 'Info',
    busyPolicy: 'dispatch',
    execute: 'gateway_help',
  }),
  defineCommand({
    name: 'status',
    description: 'Show the model, the conversation and any work still running',
    category: 'Info',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'usage',
    description: 'Show the tokens and cost this conversation has used',
    category: 'Info',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'context',
    description: 'Show how full the context window is and what fills it',
    category: 'Info',
    busyPolicy: 'dispatch',
  }),
  defineCommand({
    name: 'profile',
    description: 'Show which Hermes profile (home folder) this conversation runs in',
    category: 'Info',
    busyPolicy: 'dispatch',
    execute: 'profile',
  }),
  defineCommand({
    name: 'whoami',
    description: 'Show who you are to this bot and which commands you may use',
    category: 'Info',
    gatewayOnly: true,
    busyPolicy: 'dispatch',
    desktop: 'messaging',
  }),
  defineCommand({
    name: 'version',
    description: 'Show the Hermes version',
    category: 'Info',
    busyPolicy: 'dispatch',
    execute: 'version',
  }),
  // Exit
  defineCommand({
    name: 'quit',
    description: 'Leave the chat (Ctrl-D does the same)',
    category: 'Exit',
    aliases: ['exit'],
    cliOnly: true,
    desktop: 'terminal',
  }),
]);
