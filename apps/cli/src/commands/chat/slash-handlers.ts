import { readdir } from 'node:fs/promises';
import path from 'node:path';
import {
  AgentError,
  compressSession,
  createDelegationRail,
  estimateTokens,
  loadMessages,
  rowsToMessages,
} from '@hermes/agent';
import { type CommandDef, helpLines } from '@hermes/commands';
import { getActiveProfileName } from '@hermes/config';
import {
  describeReviewError,
  formatDispatchNote,
  parseReviewRequest,
  ReviewRefusal,
  startReview,
} from '@hermes/review-engine';
import { classifyMessage, sanitizeTitle } from '@hermes/session-store';
import { CliError } from '../../errors.js';
import { count, formatAge, formatDuration, oneLine, printable } from '../../output/format.js';
import type { Styles } from '../../output/style.js';
import { resolveSession } from '../../store.js';
import type { ChatRuntime } from './chat-runtime.js';
import type { ToolDisplay } from './turn-renderer.js';

/** What the terminal chat offers a command besides the runtime. */
export interface SlashUi {
  readonly styles: Styles;
  readonly version: string;
  readonly interactive: boolean;
  toolDisplay: ToolDisplay;
  clearScreen(): void;
  /** Holds a message until the running answer ends. */
  queue(text: string): void;
}

/** A command's outcome: text to show, and/or a message to send as a turn, and/or leave. */
export interface SlashResult {
  readonly text?: string;
  readonly turn?: string;
  readonly exit?: boolean;
  /**
   * Set when the command could not do what was asked (`text` says why): the interactive chat just
   * shows the text; `chat -q` reports it as an error (stderr, exit 1, or 2 for `usage`).
   */
  readonly failure?: SlashFailure;
}

export interface SlashFailure {
  /** A stable code for `--json` (`no_conversation`, `title_in_use`, …). */
  readonly code: string;
  /** The command was used without what it needs (`Usage: …`). */
  readonly usage?: boolean;
}

function refused(code: string, text: string): SlashResult {
  return { text, failure: { code } };
}

function usageRefusal(text: string): SlashResult {
  return { text, failure: { code: 'usage', usage: true } };
}

type Handler = (runtime: ChatRuntime, args: string, ui: SlashUi) => Promise<SlashResult>;

const NOT_YET = (name: string): SlashResult =>
  refused('command_unavailable', `/${name} is not available in hermes chat yet.`);

const NO_SESSION: SlashResult = refused(
  'no_conversation',
  'No conversation yet — send a message first.',
);

async function review(runtime: ChatRuntime, args: string): Promise<SlashResult> {
  // Without a delegation registry (chat -q without --wait) the rail runs the review to the end
  // here and the answer carries the results. A git review needs no conversation, but its
  // result must come back to one.
  let gitTarget = false;
  try {
    gitTarget = parseReviewRequest(args).target.kind !== 'conversation';
  } catch {
    gitTarget = false;
  }
  const needsSession = runtime.sessionId !== undefined || gitTarget;
  const sessionId = needsSession ? await runtime.ensureSession() : undefined;
  const messages = sessionId
    ? loadMessages(runtime.store, runtime.store.getCompressionTip(sessionId))
    : [];
  try {
    const rail = createDelegationRail({
      agent: runtime.agent,
      cwd: runtime.cwd,
      ...(sessionId ? { sessionId, sessionKey: sessionId } : {}),
    });
    const started = await startReview({
      messages,
      instructions: args,
      rail,
      config: runtime.raw,
      cwd: runtime.cwd,
      systemPrompt: sessionId
        ? (runtime.store.getSessionSystemPrompt(sessionId) ?? undefined)
        : undefined,
      ...(sessionId
        ? {
            origin: {
              sessionKey: sessionId,
              originSessionId: sessionId,
              parentSessionId: sessionId,
            },
          }
        : {}),
    });
    return { text: formatDispatchNote(started, args) };
  } catch (error) {
    return refused(
      ReviewRefusal.isInstance(error) ? error.code : 'review_failed',
      describeReviewError(error),
    );
  }
}

async function history(runtime: ChatRuntime, _args: string, ui: SlashUi): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  const rows = loadMessages(
    runtime.store,
    runtime.store.getCompressionTip(runtime.sessionId),
  ).filter(
    (row) => (row.role === 'user' || row.role === 'assistant') && (row.content ?? '').trim() !== '',
  );
  const shown = rows.slice(-20);
  const lines = shown.map((row) => {
    // The summary a compressed conversation continues from is stored as a user message.
    const who =
      classifyMessage(row) === 'pure_carrier'
        ? ui.styles.yellow('summary of the earlier conversation')
        : row.role === 'user'
          ? ui.styles.green('you')
          : ui.styles.magenta('hermes');
    return `${who}: ${printable(oneLine(row.content, 160))}`;
  });
  if (rows.length > shown.length)
    lines.unshift(ui.styles.dim(`… ${rows.length - shown.length} earlier`));
  return { text: lines.join('\n') || 'No messages yet.' };
}

async function sessions(runtime: ChatRuntime, _args: string, ui: SlashUi): Promise<SlashResult> {
  const page = runtime.store.listSessionsRich({ limit: 10 });
  if (page.sessions.length === 0) return { text: 'No sessions yet.' };
  return {
    text: page.sessions
      .map((session) => {
        const mark = session.lineageIds.includes(runtime.sessionId ?? '') ? '*' : ' ';
        // A first message never passes for a title, coloured or not.
        const name = session.title
          ? printable(oneLine(session.title, 50))
          : ui.styles.dim(`(untitled) ${printable(oneLine(session.preview, 50))}`);
        return `${mark} ${ui.styles.cyan(session.id)}  ${name}  ${ui.styles.dim(formatAge(session.lastActive))}`;
      })
      .join('\n')
      .concat(`\n${ui.styles.dim('Switch with /resume <id or title>')}`),
  };
}

async function resume(runtime: ChatRuntime, args: string): Promise<SlashResult> {
  if (args.trim() === '') return usageRefusal('Usage: /resume <session id or title>');
  try {
    const session = resolveSession(runtime.store, args);
    const tip = runtime.store.getCompressionTip(session.id);
    runtime.useSession(tip);
    // Results that came back to it while it was closed are delivered once this command ends.
    await runtime.recoverOwed();
    const row = runtime.store.requireSession(tip);
    return {
      text: `Resumed ${row.title ? `"${row.title}" ` : ''}(${tip}, ${count(row.messageCount, 'message')}).`,
    };
  } catch (error) {
    if (CliError.isInstance(error)) return refused(error.code, error.message);
    throw error;
  }
}

async function title(runtime: ChatRuntime, args: string): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  const wanted = args.trim();
  if (wanted === '') {
    const session = runtime.store.requireSession(runtime.sessionId);
    return {
      text: session.title
        ? `Title: ${session.title}`
        : 'No title yet. Set one with /title <title>.',
    };
  }
  let clean: string | null;
  try {
    clean = sanitizeTitle(wanted);
  } catch (error) {
    return usageRefusal((error as Error).message);
  }
  // Only invisible characters: storing it would clear the title instead.
  if (clean === null)
    return usageRefusal('Usage: /title <title> — the title is empty (only invisible characters)');
  try {
    await runtime.store.setTitle(runtime.sessionId, clean, { source: 'user' });
  } catch (error) {
    // The store refuses a taken, too long or otherwise unusable title with its own message.
    const code = (error as { code?: unknown }).code;
    return refused(typeof code === 'string' ? code : 'title_refused', (error as Error).message);
  }
  return { text: `Title set: ${clean}` };
}

async function compress(runtime: ChatRuntime, args: string): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  try {
    const result = await compressSession({
      store: runtime.store,
      config: runtime.config,
      sessionId: runtime.sessionId,
      ...(args.trim() ? { focus: args.trim() } : {}),
    });
    runtime.useSession(result.childSessionId);
    return {
      text: `Compressed ${result.summarizedMessages} older messages into a summary (kept ${result.retainedMessages}); the conversation continues in ${result.childSessionId}.`,
    };
  } catch (error) {
    if (AgentError.isInstance(error)) return refused(error.code, error.message);
    throw error;
  }
}

async function model(runtime: ChatRuntime, args: string): Promise<SlashResult> {
  const wanted = args.trim();
  if (wanted !== '') {
    await runtime.setModel(wanted);
    return { text: `Using ${wanted} for this conversation.` };
  }
  try {
    const route = runtime.agent.route();
    return { text: `${route.model} via ${route.baseUrl} (provider ${route.provider})` };
  } catch (error) {
    if (AgentError.isInstance(error)) return refused(error.code, error.message);
    throw error;
  }
}

async function models(runtime: ChatRuntime): Promise<SlashResult> {
  let route: ReturnType<typeof runtime.agent.route>;
  try {
    route = runtime.agent.route();
  } catch (error) {
    if (AgentError.isInstance(error)) return refused(error.code, error.message);
    throw error;
  }
  try {
    const response = await fetch(`${route.baseUrl.replace(/\/+$/, '')}/models`, {
      headers: route.apiKey ? { authorization: `Bearer ${route.apiKey}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok)
      return refused(
        'models_unavailable',
        `${route.baseUrl} answered HTTP ${response.status} for /models.`,
      );
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    const ids = (body.data ?? [])
      .map((entry) => String(entry.id ?? ''))
      .filter(Boolean)
      .sort();
    return { text: ids.length ? ids.join('\n') : 'The provider listed no models.' };
  } catch (error) {
    return refused('models_unavailable', `Could not list models: ${(error as Error).message}`);
  }
}

async function tools(runtime: ChatRuntime, _args: string, ui: SlashUi): Promise<SlashResult> {
  return {
    text: runtime.agent
      .listToolsets()
      .map(
        (toolset) =>
          `${toolset.enabled ? ui.styles.green('●') : ui.styles.dim('○')} ${toolset.name.padEnd(11)} ${ui.styles.dim(toolset.tools.join(', ') || '-')}`,
      )
      .join('\n'),
  };
}

async function skills(runtime: ChatRuntime): Promise<SlashResult> {
  const root = path.join(runtime.home, 'skills');
  const found: string[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > 2) return;
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const inner = path.join(folder, entry.name);
      const files = await readdir(inner).catch(() => [] as string[]);
      if (files.includes('SKILL.md')) found.push(path.relative(root, inner));
      else await walk(inner, depth + 1);
    }
  };
  await walk(root, 0);
  return { text: found.length ? found.sort().join('\n') : `No skills installed (${root}).` };
}

async function usage(runtime: ChatRuntime): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  const session = runtime.store.requireSession(runtime.sessionId);
  return {
    text: [
      `input tokens:  ${session.inputTokens}${session.cacheReadTokens ? ` (${session.cacheReadTokens} cached)` : ''}`,
      `output tokens: ${session.outputTokens}${session.reasoningTokens ? ` (${session.reasoningTokens} reasoning)` : ''}`,
      `model calls:   ${session.apiCallCount}`,
      `tool calls:    ${session.toolCallCount}`,
    ].join('\n'),
  };
}

async function context(runtime: ChatRuntime): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  const rows = loadMessages(runtime.store, runtime.store.getCompressionTip(runtime.sessionId));
  const used = estimateTokens(rowsToMessages(rows));
  let window: number | undefined;
  try {
    window = runtime.agent.route().contextLength;
  } catch {
    window = undefined;
  }
  return {
    text: window
      ? `about ${used} of ${window} tokens (${Math.round((used / window) * 100)}%) in ${count(rows.length, 'message')}`
      : `about ${used} tokens in ${count(rows.length, 'message')}`,
  };
}

async function status(runtime: ChatRuntime, _args: string, ui: SlashUi): Promise<SlashResult> {
  let modelText: string;
  try {
    const route = runtime.agent.route();
    modelText = `${route.model} via ${route.baseUrl}`;
  } catch (error) {
    modelText = (error as Error).message;
  }
  const background = runtime.backgroundAgents();
  return {
    text: [
      `model:       ${modelText}`,
      `session:     ${runtime.sessionId ?? '(new — created with your first message)'}`,
      `profile:     ${getActiveProfileName(runtime.home)} (${runtime.home})`,
      `background:  ${background.length} agent${background.length === 1 ? '' : 's'} running`,
      `tool output: ${ui.toolDisplay}`,
    ].join('\n'),
  };
}

async function agents(runtime: ChatRuntime): Promise<SlashResult> {
  const running = runtime.backgroundAgents();
  if (running.length === 0)
    return { text: 'No background agents are working for this conversation.' };
  return {
    text: running
      .map(
        (unit) =>
          `${unit.delegation_id}  ${unit.goal}  ${unit.status}, ${formatDuration(unit.running_seconds)}${unit.children_activity.current_tool ? `, in ${unit.children_activity.current_tool}` : ''}`,
      )
      .join('\n'),
  };
}

async function retry(runtime: ChatRuntime): Promise<SlashResult> {
  if (!runtime.sessionId) return NO_SESSION;
  const rows = loadMessages(runtime.store, runtime.store.getCompressionTip(runtime.sessionId));
  const last = [...rows]
    .reverse()
    .find((row) => row.role === 'user' && !row.displayKind && row.content);
  return last?.content
    ? { turn: last.content }
    : refused('nothing_to_retry', 'Nothing to retry yet.');
}

/** The handlers of the terminal chat, by canonical command name. */
export const SLASH_HANDLERS: Readonly<Record<string, Handler>> = {
  help: async () => ({ text: helpLines('cli').join('\n') }),
  new: async (runtime) => {
    const previous = runtime.sessionId;
    runtime.useSession(undefined);
    return {
      text: previous
        ? `New conversation. The last one is saved as ${previous}.`
        : 'New conversation.',
    };
  },
  clear: async (runtime, _args, ui) => {
    ui.clearScreen();
    runtime.useSession(undefined);
    return { text: 'New conversation.' };
  },
  stop: async (runtime) => {
    const interrupted = runtime.interrupt();
    const stopped = runtime.stopBackground();
    return {
      text:
        interrupted || stopped > 0
          ? `Stopped${interrupted ? ' the answer' : ''}${interrupted && stopped ? ' and' : ''}${stopped ? ` ${stopped} background agent${stopped === 1 ? '' : 's'}` : ''}.`
          : 'Nothing is running.',
    };
  },
  retry: async (runtime) => retry(runtime),
  undo: async () => NOT_YET('undo'),
  queue: async (runtime, args, ui) => {
    if (args.trim() === '') return usageRefusal('Usage: /queue <message>');
    if (runtime.busy) {
      ui.queue(args);
      return { text: 'Queued; it is sent when the answer ends.' };
    }
    return { turn: args };
  },
  steer: async (runtime, args) => {
    if (args.trim() === '') return usageRefusal('Usage: /steer <guidance>');
    return runtime.steer(args.trim())
      ? { text: 'Noted: the agent reads it with its next tool result.' }
      : refused('no_running_answer', 'No answer is running; send it as a message instead.');
  },
  review: async (runtime, args) => review(runtime, args),
  agents: async (runtime) => agents(runtime),
  history,
  sessions,
  resume: async (runtime, args) => resume(runtime, args),
  title: async (runtime, args) => title(runtime, args),
  compress: async (runtime, args) => compress(runtime, args),
  model: async (runtime, args) => model(runtime, args),
  models: async (runtime) => models(runtime),
  reasoning: async () => NOT_YET('reasoning'),
  prompt: async () => NOT_YET('prompt'),
  verbose: async (_runtime, args, ui) => {
    const wanted = args.trim().toLowerCase();
    if (wanted === '') return { text: `Tool activity: ${ui.toolDisplay} (off, new, all)` };
    const mode = wanted === 'verbose' ? 'all' : wanted;
    if (mode !== 'off' && mode !== 'new' && mode !== 'all')
      return usageRefusal('Usage: /verbose [off|new|all]');
    ui.toolDisplay = mode;
    return { text: `Tool activity: ${mode}` };
  },
  tools,
  skills: async (runtime) => skills(runtime),
  status,
  usage: async (runtime) => usage(runtime),
  context: async (runtime) => context(runtime),
  profile: async (runtime) => ({ text: `${getActiveProfileName(runtime.home)} (${runtime.home})` }),
  version: async (_runtime, _args, ui) => ({ text: `hermes ${ui.version}` }),
  quit: async () => ({ exit: true }),
};

/** Runs a registered command; commands this surface does not offer say so. */
export async function runSlashCommand(
  command: CommandDef,
  args: string,
  runtime: ChatRuntime,
  ui: SlashUi,
): Promise<SlashResult> {
  if (command.gatewayOnly)
    return refused('command_unavailable', `/${command.name} is only available in chat apps.`);
  const handler = SLASH_HANDLERS[command.name];
  if (!handler) return NOT_YET(command.name);
  return handler(runtime, args, ui);
}
