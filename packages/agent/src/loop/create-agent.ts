import { randomBytes } from 'node:crypto';
import { getHermesHome, getSecret } from '@hermes/config';
import {
  type MessageInput,
  SessionStoreError,
  type TranscriptMark,
  TURN_LEASE_TTL_SECONDS,
  type UsageInput,
} from '@hermes/session-store';
import { compressSession } from '../compression/compress-session.js';
import { CHARS_PER_TOKEN, messageChars } from '../compression/estimate-tokens.js';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import type { AgentEvent } from '../events.js';
import {
  addUsage,
  type ChatMessage,
  emptyModelTurn,
  emptyUsage,
  type Usage,
} from '../model/chat-message.js';
import type { FunctionSchema } from '../model/function-schema.js';
import { createModelClient, type ModelClient } from '../model/model-client.js';
import type { ModelRoute } from '../model/model-route.js';
import { DEFAULT_CONTEXT_LENGTH } from '../model/provider-catalog.js';
import { resolveFallbackRoutes } from '../model/resolve-fallback-routes.js';
import { resolveRuntimeProvider } from '../model/resolve-runtime-provider.js';
import { SystemPromptCache } from '../prompt/system-prompt.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import type { ApprovalDecision, ToolContext } from '../tools/tool-context.js';
import { createToolRegistry } from '../tools/tool-registry.js';
import { listToolsets, resolveToolNames } from '../tools/toolsets.js';
import type { Agent, CreateAgentOptions, RunTurnOptions, TurnResult } from './agent-types.js';
import { runToolCalls } from './run-tool-calls.js';
import { type AppendedRows, storedRow, TranscriptCache } from './transcript.js';

/** The final answer when the model ends a turn with nothing to say (the reference's sentinel). */
export const EMPTY_RESPONSE_SENTINEL = '(empty)';

/** Sent (never stored) with the grace call after the iteration budget is spent. */
export const GRACE_CALL_NOTE =
  'You have used every tool-calling step allowed for this turn. Do not call tools. Reply now with your final answer: what you did, what you found, and what is left.';

/** What a turn's opening transaction stored. */
interface Opened {
  readonly messageId?: number;
  readonly transcript: TranscriptMark;
  /** What it appended, so the transcript need not be read back. */
  readonly appended: AppendedRows;
}

type Emit = (event: DistributiveOmit<AgentEvent, 'runId' | 'sessionId'>) => void;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * Builds an agent over a config and a session store. Nothing is resolved or touched until a
 * turn runs, so a gateway can build agents for profiles that have no model configured yet.
 */
export function createAgent(options: CreateAgentOptions): Agent {
  const { config, store } = options;
  const home = options.home ?? getHermesHome();
  const platform = options.platform ?? 'cli';
  const depth = options.depth ?? 0;
  const cwd = options.cwd ?? (config.terminal.cwd || process.cwd());
  const maxIterations = options.maxIterations ?? config.agent.maxTurns;
  const secret = options.secret ?? getSecret;
  const registry = createToolRegistry(options.tools ?? BUILTIN_TOOLS);
  const enabled = new Set(
    resolveToolNames(config, platform, registry, {
      ...(options.toolsets ? { toolsets: options.toolsets } : {}),
      ...(options.disabledToolsets ? { disabled: options.disabledToolsets } : {}),
    }),
  );
  const tools = registry.list().filter((tool) => enabled.has(tool.name));
  const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));
  const toolSchemas: FunctionSchema[] = tools.map((tool) => {
    const definition = tool.definition?.({ config, depth, platform });
    return {
      name: tool.name,
      description: definition?.description ?? tool.description,
      parameters: definition?.parameters ?? tool.jsonSchema,
    };
  });
  // Constant per agent: the tools' share of the prompt-size estimate.
  let toolChars = 0;
  for (const schema of toolSchemas) toolChars += JSON.stringify(schema).length;
  const sessionStates = new Map<string, Map<string, unknown>>();
  const prompts = new SystemPromptCache();
  const transcripts = new TranscriptCache(store);
  let modelClient: ModelClient | undefined;
  let routes:
    | { main: ModelRoute; fallbacks: readonly ModelRoute[]; warnings: string[] }
    | undefined;

  const resolveRoutes = () => {
    if (routes) return routes;
    const main = options.route ?? resolveRuntimeProvider(config, { secret, home });
    if (options.fallbackRoutes || options.route) {
      routes = { main, fallbacks: options.fallbackRoutes ?? [], warnings: [] };
    } else {
      const chain = resolveFallbackRoutes(config, config.fallbackProviders, { secret, home });
      routes = { main, fallbacks: chain.routes, warnings: chain.warnings };
    }
    return routes;
  };

  const approveWith = async (
    request: Parameters<ToolContext['approve']>[0],
    toolName: string,
    sessionId: string,
    signal: AbortSignal,
  ): Promise<ApprovalDecision> => {
    if (!options.approve) return 'deny';
    const timeoutMs = config.approvals.timeoutS * 1000;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        Promise.resolve(options.approve({ ...request, toolName, sessionId }, signal)),
        new Promise<ApprovalDecision>((resolve) => {
          timer = setTimeout(() => resolve('deny'), timeoutMs);
          timer.unref();
        }),
      ]);
    } catch {
      return 'deny';
    } finally {
      if (timer) clearTimeout(timer);
    }
  };

  const agent: Agent = {
    config,
    store,
    home,
    platform,
    depth,
    cwd,
    maxIterations,
    options,
    tools,
    route: () => resolveRoutes().main,
    fallbackRoutes: () => resolveRoutes().fallbacks,
    listToolsets: () => listToolsets(config, platform, registry),
    createChild: (overrides = {}) =>
      createAgent({ ...options, depth: depth + 1, parent: agent, ...overrides }),
    createSession: (input = {}) =>
      store.createSession({
        source: platform,
        cwd,
        ...(routes ? { model: routes.main.model } : {}),
        ...input,
      }),
    runTurn: (turnOptions) => runTurn(turnOptions),
  };

  const clientFor = (main: ModelRoute, fallbacks: readonly ModelRoute[]): ModelClient => {
    // One client per agent (its SDK clients and connections are reused turn after turn).
    modelClient ??= createModelClient({
      routes: [main, ...fallbacks],
      maxRetries: options.maxRetries ?? config.agent.apiMaxRetries,
      stream: options.stream ?? config.agent.stream,
    });
    return modelClient;
  };

  async function runTurn(turnOptions: RunTurnOptions): Promise<TurnResult> {
    const { main, fallbacks, warnings } = resolveRoutes();
    const requested = store.getSession(turnOptions.sessionId);
    if (!requested)
      throw new AgentError({
        code: 'session_not_found',
        message: AGENT_ERROR_MESSAGES.sessionNotFound(turnOptions.sessionId),
      });
    const sessionId = store.getCompressionTip(turnOptions.sessionId);
    const lineageRoot =
      sessionId === requested.id
        ? requested.lineageRootId
        : (store.getSession(sessionId)?.lineageRootId ?? sessionId);
    const turnCwd = turnOptions.cwd ?? cwd;
    // Built before the lease so that the prompt and the user message are stored in the lease's
    // transaction; a failure to build it fails the turn inside the lease, as any other.
    let prompt: { text: string } | { error: unknown };
    try {
      prompt = {
        text:
          options.systemPrompt ??
          (await prompts.build({
            home,
            cwd: turnCwd,
            ...(options.identity === undefined ? {} : { identity: options.identity }),
            ...(options.systemPromptParts ? { parts: options.systemPromptParts } : {}),
            ...(options.skipContextFiles ? { skipContextFiles: true } : {}),
          })),
      };
    } catch (error) {
      prompt = { error };
    }
    const userMessage: MessageInput | undefined =
      turnOptions.message === undefined
        ? undefined
        : {
            role: 'user',
            content: turnOptions.message,
            ...(turnOptions.displayKind ? { displayKind: turnOptions.displayKind } : {}),
          };
    // One transaction: the lease, the prompt and the user message. Should it fail (short of
    // the database staying locked), the lease is taken alone and the turn stores the rest one
    // write at a time, reporting what fails as a failed turn.
    let opened: Opened | undefined;
    let holder: string | null;
    const began = await store
      .beginTurn(
        sessionId,
        'text' in prompt
          ? { systemPrompt: prompt.text, ...(userMessage ? { messages: [userMessage] } : {}) }
          : {},
      )
      .catch((error: unknown) => {
        if (SessionStoreError.isInstance(error) && error.code === 'database_locked') throw error;
        return undefined;
      });
    if (began === undefined) {
      holder = await store.acquireTurnLease(sessionId);
    } else {
      holder = began?.holder ?? null;
      if (began && 'text' in prompt)
        opened = {
          ...(userMessage ? { messageId: began.messageIds[0] } : {}),
          transcript: began.transcript,
          appended: {
            previousMessageId: began.previousMessageId,
            rows:
              userMessage && began.messageIds[0] !== undefined
                ? [storedRow(began.messageIds[0], userMessage)]
                : [],
          },
        };
    }
    if (holder === null)
      throw new AgentError({
        code: 'session_busy',
        message: AGENT_ERROR_MESSAGES.sessionBusy(turnOptions.sessionId),
      });
    const lease = { holder, sessionId, released: false };
    const renew = setInterval(
      () => {
        store.renewTurnLease(lease.sessionId, holder).catch(() => {});
      },
      (TURN_LEASE_TTL_SECONDS * 1000) / 3,
    );
    renew.unref();
    try {
      return await runLeased({
        turnOptions,
        main,
        fallbacks,
        warnings,
        sessionId,
        lineageRoot,
        turnCwd,
        prompt,
        userMessage,
        opened,
        lease,
      });
    } finally {
      clearInterval(renew);
      if (!lease.released) await store.releaseTurnLease(lease.sessionId, holder).catch(() => {});
    }
  }

  async function runLeased(input: {
    turnOptions: RunTurnOptions;
    main: ModelRoute;
    fallbacks: readonly ModelRoute[];
    warnings: readonly string[];
    sessionId: string;
    /** The conversation's lineage root (keys the tools' per-conversation state). */
    lineageRoot: string;
    turnCwd: string;
    prompt: { text: string } | { error: unknown };
    userMessage: MessageInput | undefined;
    /** What `beginTurn` stored (absent when it failed and the turn stores it itself). */
    opened: Opened | undefined;
    /** The turn lease: follows the session into a compression child; `released` once let go. */
    lease: { readonly holder: string; sessionId: string; released: boolean };
  }): Promise<TurnResult> {
    const { turnOptions, main, turnCwd, lease } = input;
    const runId = `run_${randomBytes(8).toString('hex')}`;
    const signal = turnOptions.signal ?? new AbortController().signal;
    const usage = emptyUsage();
    let sessionId = input.sessionId;
    const emit: Emit = (event) => {
      if (!turnOptions.onEvent) return;
      try {
        turnOptions.onEvent({ ...event, runId, sessionId } as AgentEvent);
      } catch {
        // A surface's listener must not break the turn.
      }
    };
    const { lineageRoot } = input;
    let sessionState = sessionStates.get(lineageRoot);
    if (!sessionState) {
      sessionState = new Map();
      sessionStates.set(lineageRoot, sessionState);
    }
    const state = sessionState;

    emit({ type: 'run.started', provider: main.provider, model: main.model, depth });
    for (const warning of input.warnings)
      emit({ type: 'warning', code: 'fallback_skipped', message: warning });

    let partial = '';
    const usageInput = (): UsageInput => ({
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: usage.cacheReadTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      reasoningTokens: usage.reasoningTokens,
      apiCalls: usage.apiCalls,
      ...(main.model ? { model: main.model } : {}),
      billingProvider: main.provider,
      billingBaseUrl: main.baseUrl,
      ...(usage.toolCalls > 0 ? { toolNames: [...usedTools] } : {}),
    });
    let usageRecorded = false;
    /**
     * Results of read-only tool calls not stored yet: they ride in the transaction of the turn's
     * next write (the model's next reply, a side-effecting call's result, the turn's end), so an
     * iteration of read-only calls costs one transaction instead of two. A crash before that write
     * loses only results any rerun recomputes (the call had no effect); the stored call is
     * answered "no result recorded" when the transcript is read (`TranscriptBuilder`).
     */
    const pending: MessageInput[] = [];
    /**
     * Runs a write carrying the pending results: taken before it (a result recorded meanwhile
     * waits for the next write) and put back should it fail.
     */
    const carrying = async <T>(write: (carried: MessageInput[]) => Promise<T>): Promise<T> => {
      const carried = pending.splice(0);
      try {
        return await write(carried);
      } catch (error) {
        pending.unshift(...carried);
        throw error;
      }
    };
    /** `messages` after the pending results, in one transaction; the ids of `messages`. */
    const append = (messages: readonly MessageInput[]): Promise<number[]> =>
      carrying(async (carried) =>
        (await store.appendMessages(sessionId, [...carried, ...messages])).slice(carried.length),
      );
    /**
     * Stores the pending results, the turn's last messages, its usage and the lease's release in
     * one transaction. Should that fail, the messages are stored alone (a failure there fails the
     * turn as before), and `finish` records the usage and the lease is released on their own.
     */
    const storeLast = async (messages: readonly MessageInput[]): Promise<number[]> => {
      try {
        return await carrying(async (carried) => {
          const ended = await store.endTurn(sessionId, {
            messages: [...carried, ...messages],
            usage: usageInput(),
            releaseLease: lease.holder,
          });
          usageRecorded = true;
          lease.released = true;
          return ended.messageIds.slice(carried.length);
        });
      } catch {
        return await append(messages);
      }
    };
    const finish = async (
      result: Omit<TurnResult, 'runId' | 'sessionId' | 'usage'>,
    ): Promise<TurnResult> => {
      if (!usageRecorded) {
        try {
          await carrying((carried) =>
            store.endTurn(sessionId, {
              ...(carried.length > 0 ? { messages: carried } : {}),
              usage: usageInput(),
              releaseLease: lease.holder,
            }),
          );
          usageRecorded = true;
          lease.released = true;
        } catch (error) {
          emit({
            type: 'warning',
            code: 'usage_not_recorded',
            message: error instanceof Error ? error.message : String(error),
          });
        }
      }
      if (pending.length > 0) {
        try {
          await append([]);
        } catch (error) {
          emit({
            type: 'warning',
            code: 'tool_results_not_recorded',
            message: error instanceof Error ? error.message : String(error),
          });
        }
      }
      const usageCopy = { ...usage };
      if (result.status === 'completed')
        emit({
          type: 'run.completed',
          finalResponse: result.finalResponse,
          exitReason: result.exitReason === 'max_iterations' ? 'max_iterations' : 'completed',
          usage: usageCopy,
        });
      else if (result.status === 'interrupted')
        emit({ type: 'run.interrupted', partialResponse: result.finalResponse, usage: usageCopy });
      else
        emit({
          type: 'run.failed',
          error: result.error ?? { code: 'internal_error', message: 'the turn failed' },
          usage: usageCopy,
        });
      return { ...result, runId, sessionId, usage: usageCopy };
    };
    const usedTools = new Set<string>();

    try {
      if ('error' in input.prompt) throw input.prompt.error;
      const systemPrompt = input.prompt.text;
      let messageId = input.opened?.messageId;
      if (!input.opened) {
        await store.setSessionSystemPrompt(sessionId, systemPrompt);
        if (input.userMessage) messageId = await store.appendMessage(sessionId, input.userMessage);
      }
      if (messageId !== undefined) await turnOptions.onMessageStored?.(messageId);
      const loaded = transcripts.load(sessionId, input.opened?.transcript, input.opened?.appended);
      let history = loaded.messages;
      // The prompt-size estimate grows with the history instead of re-serialising it per call.
      let historyChars = loaded.chars;
      const remember = (message: ChatMessage) => {
        history.push(message);
        historyChars += messageChars(message);
      };
      const client = clientFor(main, input.fallbacks);
      const system = turnOptions.ephemeralSystemNote
        ? `${systemPrompt}\n\n${turnOptions.ephemeralSystemNote}`
        : systemPrompt;
      let iterations = 0;
      // At most one compression per turn: if the tools and the kept tail alone pass the
      // threshold, compressing again would only loop.
      let compressionTried = false;
      const contextLength = main.contextLength ?? DEFAULT_CONTEXT_LENGTH;
      const compressAbove = Math.min(
        config.compression.threshold * contextLength,
        options.compressionThresholdTokens && options.compressionThresholdTokens > 0
          ? options.compressionThresholdTokens
          : Number.POSITIVE_INFINITY,
      );
      const systemChars = messageChars({ role: 'system', content: system });
      // What the last model reply said, returned when a caller stops the turn between calls.
      let lastContent = '';
      const steered = new Map<string, string>();
      const origin = {
        sessionKey: turnOptions.origin?.sessionKey ?? turnOptions.sessionId,
        uiSessionId: turnOptions.origin?.uiSessionId,
      };

      for (;;) {
        if (signal.aborted) return await finish(interrupted(partial));
        if (turnOptions.control?.shouldStop?.()) return await finish(interrupted(lastContent));
        const grace = iterations >= maxIterations;
        const offered = grace ? [] : toolSchemas;
        if (
          config.compression.enabled &&
          !compressionTried &&
          Math.ceil((systemChars + historyChars + (grace ? 0 : toolChars)) / CHARS_PER_TOKEN) >
            compressAbove
        ) {
          compressionTried = true;
          try {
            // Compression reads the transcript from the store: every result goes in first.
            if (pending.length > 0) await append([]);
            const compressed = await compressSession({
              store,
              config,
              sessionId,
              secret,
              home,
              signal,
            });
            const from = sessionId;
            sessionId = compressed.childSessionId;
            lease.sessionId = sessionId;
            await store.setSessionSystemPrompt(sessionId, systemPrompt);
            const reloaded = transcripts.load(sessionId);
            history = reloaded.messages;
            historyChars = reloaded.chars;
            emit({
              type: 'session.compressed',
              fromSessionId: from,
              toSessionId: sessionId,
              summarizedMessages: compressed.summarizedMessages,
              retainedMessages: compressed.retainedMessages,
            });
          } catch (error) {
            if (signal.aborted) return await finish(interrupted(partial));
            emit({
              type: 'warning',
              code: 'compression_failed',
              message: `context compression failed, continuing uncompressed: ${error instanceof Error ? error.message : String(error)}`,
            });
          }
        }
        const messages: ChatMessage[] = [{ role: 'system', content: system }, ...history];
        if (grace) messages.push({ role: 'user', content: GRACE_CALL_NOTE });
        const turn = emptyModelTurn();
        try {
          await client.complete({
            messages,
            tools: offered,
            signal,
            sessionId,
            turn,
            onTextDelta: (text) => emit({ type: 'message.delta', text }),
            onReasoningDelta: (text) => emit({ type: 'reasoning.delta', text }),
            onNotice: (notice) => emit(notice),
          });
        } catch (error) {
          if (AgentError.isInstance(error) && error.code === 'interrupted') {
            partial = turn.content;
            if (partial !== '' || turn.reasoning !== '')
              await storeLast([
                {
                  role: 'assistant',
                  content: partial,
                  ...(turn.reasoning ? { reasoning: turn.reasoning } : {}),
                  finishReason: 'interrupted',
                },
              ]);
            return await finish(interrupted(partial));
          }
          return await finish(failed(error));
        }
        iterations += 1;
        addUsage(usage, turn.usage);
        // A model that calls tools during the grace call gets no tools run.
        const toolCalls = grace ? [] : turn.toolCalls;
        const reply: MessageInput = {
          role: 'assistant',
          content: turn.content,
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          ...(turn.reasoning ? { reasoning: turn.reasoning } : {}),
          ...(turn.reasoningItems.length > 0 ? { codexReasoningItems: turn.reasoningItems } : {}),
          finishReason: turn.finishReason,
        };
        // The final reply is stored with the usage and the lease's release (one transaction).
        const [replyId = 0] =
          toolCalls.length === 0 ? await storeLast([reply]) : await append([reply]);
        emit({
          type: 'message.completed',
          messageId: replyId,
          content: turn.content,
          reasoning: turn.reasoning,
          toolCalls,
          finishReason: turn.finishReason,
        });
        if (toolCalls.length === 0) {
          const finalResponse = turn.content.trim() === '' ? EMPTY_RESPONSE_SENTINEL : turn.content;
          return await finish({
            status: 'completed',
            exitReason: grace ? 'max_iterations' : 'completed',
            finalResponse,
          });
        }
        lastContent = turn.content;
        remember({
          role: 'assistant',
          content: turn.content === '' ? null : turn.content,
          tool_calls: toolCalls,
          ...(turn.reasoningItems.length > 0 ? { codex_reasoning_items: turn.reasoningItems } : {}),
        });
        usage.toolCalls += toolCalls.length;
        for (const call of toolCalls) usedTools.add(call.function.name);
        const results = await runToolCalls({
          calls: toolCalls,
          tools: toolsByName,
          signal,
          emit,
          contextFor: (call): ToolContext => ({
            agent,
            sessionId,
            runId,
            toolCallId: call.id,
            home,
            cwd: turnCwd,
            config,
            store,
            signal,
            depth,
            platform,
            emit: (event) => {
              try {
                turnOptions.onEvent?.(event);
              } catch {}
            },
            approve: (request) => approveWith(request, call.function.name, sessionId, signal),
            secret,
            sessionState: state,
            origin,
          }),
          persist: async ({ call, outcome }) => {
            // A steer rides on the next tool result the turn stores (the model reads it there).
            const steer = turnOptions.control?.takeSteer?.();
            const content =
              steer === undefined ? outcome.content : `${outcome.content}\n\n${steerNote(steer)}`;
            if (steer !== undefined) steered.set(call.id, content);
            const message: MessageInput = {
              role: 'tool',
              content,
              toolCallId: call.id,
              toolName: call.function.name,
            };
            // A call with effects is on record before the turn goes on; see `pending`.
            if (toolsByName.get(call.function.name)?.readOnly) pending.push(message);
            else await append([message]);
          },
        });
        for (const { call, outcome } of results)
          remember({
            role: 'tool',
            tool_call_id: call.id,
            content: steered.get(call.id) ?? outcome.content,
            tool_name: call.function.name,
          });
        steered.clear();
        partial = '';
      }
    } catch (error) {
      if (signal.aborted) return await finish(interrupted(partial));
      return await finish(failed(error));
    }
  }

  return agent;
}

/** How a steer appears inside a tool result. */
export function steerNote(text: string): string {
  return `[STEER — message from the agent that delegated this task]: ${text}`;
}

function interrupted(partial: string): Omit<TurnResult, 'runId' | 'sessionId' | 'usage'> {
  return { status: 'interrupted', exitReason: 'interrupted', finalResponse: partial };
}

function failed(error: unknown): Omit<TurnResult, 'runId' | 'sessionId' | 'usage'> {
  const described = AgentError.isInstance(error)
    ? { code: error.code, message: error.message }
    : {
        code: 'internal_error' as const,
        message: error instanceof Error ? error.message : String(error),
      };
  return { status: 'failed', exitReason: 'error', finalResponse: '', error: described };
}

export type { Usage };
