import { compressSession } from '@hermes/agent';
import { helpLines, resolveCommand } from '@hermes/commands';
import {
  describeReviewError,
  formatDispatchNote,
  REVIEW_NOTHING_YET_MESSAGE,
  REVIEW_SESSION_BUSY_MESSAGE,
  startReview,
} from '@hermes/review-engine';
import { readAllMessages } from '@hermes/session-store';
import type { Bridge } from '../bridge.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from '../contract/error-codes.js';
import type { MethodParams, MethodResult } from '../contract/methods.js';
import type { LiveSession } from '../runtime/live-session.js';
import { findSkill } from '../runtime/skills.js';
import { withUiSession } from '../runtime/ui-scope.js';
import { BRIDGE_VERSION } from '../version.js';

/** Commands that change what the agent is asked: `slash.exec` forwards them to `command.dispatch`. */
export const PENDING_INPUT_COMMANDS: ReadonlySet<string> = new Set([
  'queue',
  'steer',
  'retry',
  'undo',
]);

/**
 * Commands a front end does itself with session methods. A Map: the command word comes from the
 * front end, and an object would answer `/constructor` with a member of its prototype.
 */
export const FRONT_END_COMMANDS: ReadonlyMap<string, string> = new Map([
  ['new', 'session.create'],
  ['start', 'session.create'],
  ['clear', 'session.create'],
  ['resume', 'session.resume'],
  ['sessions', 'session.list'],
  ['quit', 'session.close'],
]);

const HISTORY_LINES = 20;
const HISTORY_CHARS = 200;

type SlashResult = MethodResult<'slash.exec'>;
type DispatchResult = MethodResult<'command.dispatch'>;

function parseCommand(text: string): { base: string; arg: string } {
  const trimmed = text.trim().replace(/^\//, '');
  const space = trimmed.search(/\s/);
  if (space === -1) return { base: trimmed.toLowerCase(), arg: '' };
  return { base: trimmed.slice(0, space).toLowerCase(), arg: trimmed.slice(space + 1).trim() };
}

function workerFailure(name: string, error: unknown): RpcError {
  if (RpcError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(RPC_ERROR_CODES.slashWorkerFailure, `/${name} failed: ${message}`);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > HISTORY_CHARS ? `${flat.slice(0, HISTORY_CHARS - 1)}…` : flat;
}

export function slashMethods(bridge: Bridge) {
  async function status(session: LiveSession): Promise<string> {
    const store = await session.runtime.store();
    const row = store.getSession(session.storedSessionId);
    if (!row) return 'No session.';
    return [
      `Session ${session.id} → ${row.id}${row.title ? ` (${row.title})` : ''}`,
      `Profile: ${session.runtime.name}; model: ${row.model ?? 'not recorded yet'}`,
      `Messages: ${row.messageCount}; tool calls: ${row.toolCallCount}; model calls: ${row.apiCallCount}`,
      `Tokens: ${row.inputTokens} in, ${row.outputTokens} out`,
      session.running
        ? 'A turn is running.'
        : session.queue.length > 0
          ? `Idle; ${session.queue.length} queued.`
          : 'Idle.',
    ].join('\n');
  }

  async function history(session: LiveSession): Promise<string> {
    const store = await session.runtime.store();
    const rows = readAllMessages(store, session.storedSessionId).filter(
      (row) =>
        (row.role === 'user' || row.role === 'assistant') &&
        (row.content ?? '').trim() !== '' &&
        row.displayKind !== 'hidden',
    );
    if (rows.length === 0) return 'No messages yet.';
    return rows
      .slice(-HISTORY_LINES)
      .map((row) => `${row.role === 'user' ? 'you' : 'agent'}: ${oneLine(row.content ?? '')}`)
      .join('\n');
  }

  async function review(session: LiveSession, instructions: string): Promise<string> {
    if (session.running || session.busy) return REVIEW_SESSION_BUSY_MESSAGE;
    const store = await session.runtime.store();
    const tip = session.storedSessionId;
    const rows = readAllMessages(store, tip);
    if (rows.length === 0) return REVIEW_NOTHING_YET_MESSAGE;
    const delegation = bridge.delegation;
    if (!delegation) return RPC_ERROR_MESSAGES.delegationUnavailable;
    const messages = rows.map((row) => ({
      role: row.role,
      content: row.content ?? '',
      ...(row.toolCalls ? { tool_calls: safeJson(row.toolCalls) } : {}),
    }));
    const loaded = session.runtime.config();
    try {
      const rail = await delegation.rail(session);
      // Bound for the dispatch only: what it starts belongs to this UI session and profile.
      const started = await session.runtime.run(() =>
        withUiSession(
          {
            uiSessionId: session.id,
            sessionKey: session.conversationId,
            storedSessionId: tip,
            profile: session.runtime.name,
            steerAuthority: { transport: 'bridge', sessionId: session.id },
          },
          () =>
            startReview({
              messages,
              instructions,
              rail,
              config: loaded.raw,
              systemPrompt: store.getSessionSystemPrompt(tip) ?? undefined,
              origin: {
                sessionKey: session.conversationId,
                originUiSessionId: session.id,
                originSessionId: tip,
                parentSessionId: tip,
              },
              ...(session.cwd ? { cwd: session.cwd } : {}),
            }),
        ),
      );
      return formatDispatchNote(started, instructions);
    } catch (error) {
      return describeReviewError(error);
    }
  }

  async function compress(session: LiveSession, focus: string): Promise<string> {
    if (session.running || session.busy)
      throw new RpcError(RPC_ERROR_CODES.sessionBusy, RPC_ERROR_MESSAGES.sessionBusy);
    session.busy = 'compress';
    try {
      const store = await session.runtime.store();
      const loaded = session.runtime.config();
      const result = await session.runtime.run(() =>
        compressSession({
          store,
          config: loaded.config,
          sessionId: session.storedSessionId,
          home: session.runtime.home,
          secret: (name) => session.runtime.secret(name),
          ...(focus ? { focus } : {}),
        }),
      );
      session.storedSessionId = result.childSessionId;
      session.emit('session.compressed', {
        run_id: null,
        from_session_id: result.parentSessionId,
        to_session_id: result.childSessionId,
      });
      return `Compressed: ${result.summarizedMessages} messages summarised, ${result.retainedMessages} kept. The conversation continues on ${result.childSessionId}.`;
    } finally {
      session.busy = undefined;
      bridge.onIdle(session);
    }
  }

  async function title(session: LiveSession, arg: string): Promise<string> {
    const store = await session.runtime.store();
    if (arg === '') {
      const row = store.getSession(session.storedSessionId);
      return row?.title ? `Title: ${row.title}` : 'No title set.';
    }
    try {
      await store.setTitle(session.storedSessionId, arg, { source: 'user' });
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    session.title = store.getSession(session.storedSessionId)?.title ?? arg;
    return `Title set: ${session.title}`;
  }

  async function tools(session: LiveSession): Promise<string> {
    const agent = await session.runtime.agent();
    const lines = agent
      .listToolsets()
      .filter((toolset) => toolset.enabled)
      .map((toolset) => `${toolset.name}: ${toolset.tools.join(', ')}`);
    return lines.length > 0
      ? ['Enabled toolsets:', ...lines].join('\n')
      : 'No toolsets are enabled.';
  }

  async function model(session: LiveSession): Promise<string> {
    const agent = await session.runtime.agent();
    try {
      const route = agent.route();
      return `Model: ${route.model} (provider ${route.provider})`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async function agents(session: LiveSession): Promise<string> {
    if (!bridge.delegation) return RPC_ERROR_MESSAGES.delegationUnavailable;
    const live = await bridge.delegation.list(session);
    if (live.length === 0) return 'No subagents are running.';
    return live
      .map(
        (entry) => `${entry.subagent_id} ${entry.status} ${entry.running_seconds}s — ${entry.goal}`,
      )
      .join('\n');
  }

  /** The live answer of a command, or undefined when it is not one this table answers. */
  async function liveOutput(
    session: LiveSession,
    name: string,
    arg: string,
  ): Promise<string | undefined> {
    switch (name) {
      case 'help':
        return ['Commands:', ...helpLines(bridge.surface === 'desktop' ? 'desktop' : 'cli')].join(
          '\n',
        );
      case 'status':
      case 'usage':
        return status(session);
      case 'history':
        return history(session);
      case 'review':
        return review(session, arg);
      case 'title':
        return title(session, arg);
      case 'compress':
        return compress(session, arg);
      case 'tools':
        return tools(session);
      case 'model':
      case 'models':
        return model(session);
      case 'agents':
        return agents(session);
      case 'version':
        return `hermes-tui-bridge ${BRIDGE_VERSION}`;
      case 'profile':
      case 'whoami':
        return `Profile: ${session.runtime.name} (${session.runtime.home})`;
      case 'stop': {
        const running = session.running;
        if (!running) return 'Nothing is running in this session.';
        running.controller.abort(new Error('stopped by /stop'));
        return 'Stopping the running turn.';
      }
      default:
        return undefined;
    }
  }

  async function dispatch(
    session: LiveSession,
    name: string,
    arg: string,
  ): Promise<DispatchResult> {
    const command = resolveCommand(name);
    const canonical = command?.name ?? name;
    const skill = command ? undefined : await findSkill(session.runtime.home, name);
    if (skill) {
      const request = arg ? `\n\nThe user's request: ${arg}` : '';
      return {
        type: 'send',
        message: `Use the "${skill}" skill: load it with skill_view(name="${skill}") and follow it.${request}`,
      };
    }
    switch (canonical) {
      case 'queue': {
        if (arg === '') return { type: 'exec', output: 'Usage: /queue <prompt>' };
        if (!session.running && !session.busy && session.queue.length === 0) {
          await bridge.submit(session, arg, 'queue');
          return { type: 'exec', output: 'Nothing was running: sent now.' };
        }
        session.queue.push(arg);
        return {
          type: 'queued',
          output: `Queued (position ${session.queue.length}): it runs when the current turn ends.`,
        };
      }
      case 'steer': {
        if (arg === '') return { type: 'exec', output: 'Usage: /steer <text>' };
        if (!session.running) return { type: 'send', message: arg };
        session.steers.push(arg);
        return {
          type: 'steered',
          output: 'Steer queued: the agent sees it with its next tool result.',
        };
      }
      case 'retry': {
        if (session.running)
          throw new RpcError(RPC_ERROR_CODES.sessionBusy, RPC_ERROR_MESSAGES.sessionBusy);
        const store = await session.runtime.store();
        const last = readAllMessages(store, session.storedSessionId)
          .filter(
            (row) =>
              row.role === 'user' &&
              row.displayKind !== 'hidden' &&
              (row.content ?? '').trim() !== '',
          )
          .at(-1);
        if (!last?.content) return { type: 'exec', output: 'Nothing to retry yet.' };
        return { type: 'send', message: last.content };
      }
      case 'compress':
        return { type: 'exec', output: await compress(session, arg) };
      default:
        throw new RpcError(
          RPC_ERROR_CODES.useCommandDispatch,
          RPC_ERROR_MESSAGES.notDispatchable(name),
        );
    }
  }

  return {
    async 'slash.exec'(params: MethodParams<'slash.exec'>): Promise<SlashResult> {
      const { base, arg } = parseCommand(params.command);
      if (base === '')
        throw new RpcError(RPC_ERROR_CODES.emptyCommand, RPC_ERROR_MESSAGES.emptyCommand);
      const session = bridge.session(params.session_id);
      const command = resolveCommand(base);
      const name = command?.name ?? base;
      try {
        const live = await liveOutput(session, name, arg);
        if (live !== undefined) return { output: live === '' ? '(no output)' : live };
        if (PENDING_INPUT_COMMANDS.has(name)) {
          if (name === 'undo') return { output: '/undo is not available in the TUI bridge yet.' };
          const result = await dispatch(session, name, arg);
          if (result.type === 'send') {
            throw new RpcError(
              RPC_ERROR_CODES.useCommandDispatch,
              RPC_ERROR_MESSAGES.pendingInputCommand(name),
            );
          }
          return { output: result.output ?? '(no output)' };
        }
        const frontEnd = FRONT_END_COMMANDS.get(name);
        if (frontEnd) return { output: `/${name} is the front end's to do: call ${frontEnd}.` };
        if (!command) {
          if (await findSkill(session.runtime.home, base)) {
            throw new RpcError(
              RPC_ERROR_CODES.useCommandDispatch,
              RPC_ERROR_MESSAGES.skillCommand(base),
            );
          }
          return {
            output: `Unknown command: /${base}. Send /help for the commands available here.`,
          };
        }
        return { output: `/${name} is not available in the TUI bridge yet.` };
      } catch (error) {
        throw workerFailure(name, error);
      }
    },

    async 'command.dispatch'(params: MethodParams<'command.dispatch'>): Promise<DispatchResult> {
      const session = bridge.session(params.session_id);
      const name = params.name.trim().replace(/^\//, '').toLowerCase();
      try {
        return await dispatch(session, name, (params.arg ?? '').trim());
      } catch (error) {
        throw workerFailure(name, error);
      }
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
