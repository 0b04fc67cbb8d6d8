import type { CommandContext, CommandOptions, Positional } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { resolveSession, withStore } from '../../store.js';
import { ChatRuntime } from './chat-runtime.js';
import { runOneShot } from './one-shot.js';
import { type ApprovalBridge, runRepl } from './repl.js';

/** The session `--resume` / `--continue` name, resolved to its compression tip. */
async function sessionToResume(home: string, options: CommandOptions): Promise<string | undefined> {
  if (typeof options.resume === 'string') {
    return withStore(home, async (store) =>
      store.getCompressionTip(resolveSession(store, options.resume as string).id),
    );
  }
  if (options.continue === true) {
    return withStore(home, async (store) => {
      const latest = store.listSessionsRich({ sources: ['cli'], limit: 1 }).sessions[0];
      if (!latest) {
        throw new CliError({
          code: 'session_not_found',
          message: 'there is no terminal conversation to continue yet',
          hint: 'Start one with: hermes chat',
        });
      }
      return store.getCompressionTip(latest.id);
    });
  }
  return undefined;
}

/** `hermes chat` (interactive) and `hermes chat -q "…"` (one answer, for scripts). */
export async function chatCommand(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const query = typeof options.query === 'string' ? options.query : undefined;
  if (options.resume !== undefined && options.continue === true) {
    throw usageError('--resume and --continue pick a conversation each; give one');
  }
  if (query === undefined && (options.wait === true || options.json === true)) {
    throw usageError('--wait and --json go with -q "<message>"');
  }
  const resumeId = await sessionToResume(context.home, options);
  const interactive = query === undefined;
  const approvals: ApprovalBridge = {};
  const runtime = await ChatRuntime.open({
    home: context.home,
    cwd: process.cwd(),
    // A one-shot run has no later turn to bring background results back to, unless it waits.
    background: interactive || options.wait === true,
    approve: interactive
      ? async (request, signal) => (approvals.ask ? approvals.ask(request, signal) : 'deny')
      : undefined,
    warn: (message) => context.output.warn(message),
  });
  runtime.useSession(resumeId);
  try {
    if (query !== undefined)
      return await runOneShot(context, runtime, { query, wait: options.wait === true });
    return await runRepl(context, runtime, approvals);
  } finally {
    await runtime.close();
  }
}
