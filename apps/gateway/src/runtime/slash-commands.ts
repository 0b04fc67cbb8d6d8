import type { ProfileRuntime } from '@hermes/agent';
import { gatewayHelpLines, parseSlashInput, type SlashInput } from '@hermes/commands';
import {
  type DelegationRail,
  describeReviewError,
  formatDispatchNote,
  REVIEW_AGENT_RUNNING_MESSAGE,
  REVIEW_NOTHING_YET_MESSAGE,
  startReview,
} from '@hermes/review-engine';
import { MESSAGES_MAX_LIMIT, type MessageRecord } from '@hermes/session-store';
import type { ActiveTurns } from './active-turns.js';
import { turnPlace } from './conversation-busy.js';

/** A chat message that named a slash command: answered here, never sent to the model. */
export interface SlashReply {
  readonly command: string;
  readonly text: string;
}

/** Builds the delegation rail a `/review` dispatches on for one session (see `setRailFactory`). */
export type RailFactory = (input: {
  runtime: ProfileRuntime;
  sessionId: string;
}) => Promise<DelegationRail | undefined>;

/** Commands the API server answers; the rest of the registry is refused with a clear note. */
const HANDLED = ['help', 'review', 'stop', 'title', 'status', 'usage', 'version'] as const;

/** The answer to a bare `/` (an empty command). */
export const EMPTY_COMMAND_MESSAGE = 'Empty command. Send /help for the commands available here.';

/**
 * A command whose busy policy is `reject`, sent while the conversation's turn runs (here or in
 * another process) — for `/review` the engine's own text.
 */
export function agentRunningMessage(name: string): string {
  return name === 'review'
    ? REVIEW_AGENT_RUNNING_MESSAGE
    : `Agent is running — wait for the turn to finish, then /${name}.`;
}

function notAvailable(name: string): SlashReply {
  return {
    command: name,
    text: `/${name} is not available on the API server. Send /help for the commands available here.`,
  };
}

/** What a chat message names: a registered command, an unknown `/name`, or a bare `/`. */
export type ParsedSlash = Exclude<SlashInput, { readonly kind: 'not_command' }>;

export const REVIEW_UNAVAILABLE_MESSAGE =
  'Review unavailable: this gateway has no delegation rail to run a reviewer on.';

function parseToolCalls(text: string | null): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Stored rows as OpenAI-format messages, the shape the review snapshot reads. */
function transcriptOf(rows: readonly MessageRecord[]) {
  return rows.map((row) => {
    const toolCalls = parseToolCalls(row.toolCalls);
    return {
      role: row.role,
      content: row.content ?? '',
      ...(toolCalls !== undefined ? { tool_calls: toolCalls } : {}),
    };
  });
}

/**
 * Slash commands of chat messages on the API surfaces (`/api/sessions/:id/chat`,
 * `/v1/chat/completions`, `/v1/responses`, `/v1/runs`). `@hermes/commands` decides what is a
 * command; a command never reaches the model.
 */
export class SlashCommands {
  readonly #turns: ActiveTurns;
  readonly #version: string;
  #railFactory: RailFactory | undefined;

  constructor(options: { turns: ActiveTurns; version: string; railFactory?: RailFactory }) {
    this.#turns = options.turns;
    this.#version = options.version;
    this.#railFactory = options.railFactory;
  }

  get reviewAvailable(): boolean {
    return this.#railFactory !== undefined;
  }

  setRailFactory(factory: RailFactory | undefined): void {
    this.#railFactory = factory;
  }

  /** The command a message names, or `undefined` for ordinary text (which goes to the model). */
  parse(message: string): ParsedSlash | undefined {
    const input = parseSlashInput(message);
    if (input.kind === 'command')
      return {
        kind: 'command',
        command: input.command,
        name: input.command.name,
        args: input.args,
      };
    if (input.kind === 'unknown') return { kind: 'unknown', name: input.name, args: input.args };
    if (input.kind === 'empty') return { kind: 'empty' };
    return undefined;
  }

  /** Answers a slash command for a session; `undefined` when the message is not one. */
  async handle(input: {
    runtime: ProfileRuntime;
    sessionId: string;
    message: string;
  }): Promise<SlashReply | undefined> {
    const parsed = this.parse(input.message);
    if (!parsed) return undefined;
    if (parsed.kind === 'empty') return { command: '', text: EMPTY_COMMAND_MESSAGE };
    if (parsed.kind === 'unknown') {
      return {
        command: parsed.name,
        text: `Unknown command: /${parsed.name}. Send /help for the commands available here.`,
      };
    }
    const { command, args } = parsed;
    if (!(HANDLED as readonly string[]).includes(command.name)) {
      return notAvailable(command.name);
    }
    const store = await input.runtime.store();
    const session = store.getSession(input.sessionId);
    const conversationId = session?.lineageRootId ?? input.sessionId;
    const place = turnPlace({
      turns: this.#turns,
      profile: input.runtime.name,
      store,
      sessionId: input.sessionId,
    });
    // The registry's busy policy, as every surface applies it: `reject` commands wait for the
    // answer to end, whichever process runs it.
    if (place !== 'idle' && command.busyPolicy === 'reject')
      return { command: command.name, text: agentRunningMessage(command.name) };
    switch (command.name) {
      case 'help':
        return {
          command: 'help',
          text: ['Commands available here:', ...gatewayHelpLines({ allowed: [...HANDLED] })].join(
            '\n',
          ),
        };
      case 'version':
        return { command: 'version', text: `hermes-gateway ${this.#version}` };
      case 'stop': {
        const count = this.#turns.interrupt(input.runtime.name, conversationId, 'stopped by /stop');
        return {
          command: 'stop',
          text:
            count > 0
              ? 'Stopping the running turn.'
              : place === 'elsewhere'
                ? 'The running turn belongs to another process (the terminal chat or another gateway); stop it there.'
                : 'Nothing is running in this session.',
        };
      }
      case 'title': {
        if (!session) return { command: 'title', text: 'No session.' };
        if (args.trim() === '')
          return {
            command: 'title',
            text: session.title ? `Title: ${session.title}` : 'No title set.',
          };
        try {
          await store.setTitle(session.id, args, { source: 'user' });
          return {
            command: 'title',
            text: `Title set: ${store.getSession(session.id)?.title ?? args}`,
          };
        } catch (error) {
          return { command: 'title', text: error instanceof Error ? error.message : String(error) };
        }
      }
      case 'status':
      case 'usage': {
        if (!session) return { command: command.name, text: 'No session.' };
        return {
          command: command.name,
          text: [
            `Session ${session.id}${session.title ? ` (${session.title})` : ''}`,
            `Profile: ${input.runtime.name}; model: ${session.model ?? 'not recorded yet'}`,
            `Messages: ${session.messageCount}; tool calls: ${session.toolCallCount}; model calls: ${session.apiCallCount}`,
            `Tokens: ${session.inputTokens} in, ${session.outputTokens} out`,
            place === 'idle'
              ? 'Idle.'
              : place === 'here'
                ? 'A turn is running.'
                : 'A turn is running in another process.',
          ].join('\n'),
        };
      }
      case 'review':
        return {
          command: 'review',
          text: await this.#review(input.runtime, input.sessionId, args),
        };
      default:
        return notAvailable(command.name);
    }
  }

  async #review(runtime: ProfileRuntime, sessionId: string, args: string): Promise<string> {
    const store = await runtime.store();
    const session = store.getSession(sessionId);
    if (!session) return REVIEW_NOTHING_YET_MESSAGE;
    const tip = store.getCompressionTip(sessionId);
    // The stored transcript is the snapshot source: a session not in memory is rehydrated here.
    const rows: MessageRecord[] = [];
    let cursor = 0;
    for (;;) {
      const page = store.getMessages(tip, { afterId: cursor, limit: MESSAGES_MAX_LIMIT });
      rows.push(...page);
      if (page.length < MESSAGES_MAX_LIMIT) break;
      cursor = page[page.length - 1]?.id ?? cursor;
    }
    if (rows.length === 0) return REVIEW_NOTHING_YET_MESSAGE;
    if (!this.#railFactory) return REVIEW_UNAVAILABLE_MESSAGE;
    try {
      const rail = await this.#railFactory({ runtime, sessionId: tip });
      if (!rail) return REVIEW_UNAVAILABLE_MESSAGE;
      const loaded = runtime.config();
      const review = await runtime.run(() =>
        startReview({
          messages: transcriptOf(rows),
          instructions: args,
          rail,
          config: loaded.raw,
          systemPrompt: store.getSessionSystemPrompt(tip) ?? undefined,
          origin: {
            sessionKey: session.sessionKey ?? tip,
            originSessionId: tip,
            parentSessionId: tip,
          },
          ...(session.cwd ? { cwd: session.cwd } : {}),
        }),
      );
      return formatDispatchNote(review, args);
    } catch (error) {
      return describeReviewError(error);
    }
  }
}
