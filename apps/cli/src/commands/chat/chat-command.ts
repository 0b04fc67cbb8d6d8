import type { CommandContext, CommandOptions, Positional } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { requireNamedHome } from '../../home-check.js';
import {
  resolveSession,
  sessionNotFound,
  sessionReference,
  withExistingStore,
} from '../../store.js';
import { ChatRuntime } from './chat-runtime.js';
import { runOneShot } from './one-shot.js';
import { type ApprovalBridge, runRepl } from './repl.js';

function nothingToContinue(): CliError {
  return new CliError({
    code: 'session_not_found',
    message: 'there is no terminal conversation to continue yet',
    hint: 'Start one with: hermes chat',
  });
}

/**
 * The session `--resume` / `--continue` name, resolved to its compression tip. Looking it up in a
 * home that has no `state.db` (or is not there) finds nothing and creates nothing.
 */
async function sessionToResume(
  context: CommandContext,
  options: CommandOptions,
): Promise<string | undefined> {
  const { home } = context;
  if (typeof options.resume !== 'string' && options.continue !== true) return undefined;
  requireNamedHome(context);
  if (typeof options.resume === 'string') {
    const reference = options.resume;
    return withExistingStore(
      home,
      async (store) => store.getCompressionTip(resolveSession(store, reference).id),
      () => {
        throw sessionNotFound(sessionReference(reference));
      },
    );
  }
  return withExistingStore(
    home,
    async (store) => {
      const latest = store.listSessionsRich({ sources: ['cli'], limit: 1 }).sessions[0];
      if (!latest) throw nothingToContinue();
      return store.getCompressionTip(latest.id);
    },
    () => {
      throw nothingToContinue();
    },
  );
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
  const resumeId = await sessionToResume(context, options);
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
