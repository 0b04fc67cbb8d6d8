import { COMMAND_REGISTRY } from './registry.js';
import { resolveCommand } from './resolve-command.js';

/**
 * Canonical names whose busy policy is not `reject` — the commands that do something other than
 * "agent is running" mid-run. For introspection (help, docs); dispatch uses
 * `shouldBypassActiveSession`.
 */
export const ACTIVE_SESSION_BYPASS_COMMANDS: ReadonlySet<string> = new Set(
  COMMAND_REGISTRY.filter((command) => command.busyPolicy !== 'reject').map(
    (command) => command.name,
  ),
);

/**
 * True for every resolvable command: while the agent answers, a recognised command is handled at
 * once (by its busy policy, or answered "agent is running") and never put in the pending-message
 * queue, where its text would be sent to the model later and silently interrupt the agent.
 */
export function shouldBypassActiveSession(name: string): boolean {
  return resolveCommand(name) !== null;
}

/** True for commands that stop the running turn before they run (`/new`, `/reset`, `/stop`). */
export function isInterruptThenDispatch(name: string): boolean {
  return resolveCommand(name)?.busyPolicy === 'interrupt_then_dispatch';
}
