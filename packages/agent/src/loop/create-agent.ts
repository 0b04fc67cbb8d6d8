import { randomUUID } from 'node:crypto';
import { getHermesHome, getSecret } from '@hermes/config';
import {
  type BeganTurn,
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
  type ModelTurn,
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
import { type AppendedRows, storedRow, TranscriptBuilder, TranscriptCache } from './transcript.js';

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
 * A new conversation's first model call, sent while the transaction that creates the
 * conversation commits (see `RunTurnOptions.newSession`). Its answer is used only after that.
 */
interface EarlyCall {
  readonly turn: ModelTurn;
  /** Settles with the call; a rejection is observed, so it never goes unhandled. */
  readonly done: Promise<void>;
  /** Sends the events the call produced so far to `emit`, and every later one straight there. */
  attach(emit: Emit): void;
  abort(): void;
}

function startEarlyCall(
  client: ModelClient,
  call: {
    messages: ChatMessage[];
    tools: readonly FunctionSchema[];
    sessionId: string;
    signal: AbortSignal | undefined;
  },
): EarlyCall {
  const local = new AbortController();
  let sink: Emit | undefined;
  const held: Parameters<Emit>[0][] = [];
  const send: Emit = (event) => {
    if (sink) sink(event);
    else held.push(event);
  };
  const turn = emptyModelTurn();
  let settled = false;
  const done = client
    .complete({
      messages: call.messages,
      tools: call.tools,
      signal: call.signal ? AbortSignal.any([call.signal, local.signal]) : local.signal,
      sessionId: call.sessionId,
      turn,
      onTextDelta: (text) => send({ type: 'message.delta', text }),
      onReasoningDelta: (text) => send({ type: 'reasoning.delta', text }),
      onNotice: (notice) => send(notice),
    })
    .then(() => undefined)
    .finally(() => {
      settled = true;
    });
  done.catch(() => {});
  return {
    turn,
    done,
    attach(emit) {
      sink = emit;
      for (const event of held.splice(0)) emit(event);
    },
    abort() {
      // Only a call still running: an abort builds a DOMException, worth skipping on every turn.
      if (!settled) local.abort();
    },
  };
}

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

  /**
   * Whether a request of `chars` serialised characters (system prompt, history, tools) is over
   * the prompt-size estimate (tokens) above which a turn compresses first.
   */
  const needsCompression = (main: ModelRoute, chars: number) =>
    config.compression.enabled &&
    Math.ceil(chars / CHARS_PER_TOKEN) >
      Math.min(
        config.compression.threshold * (main.contextLength ?? DEFAULT_CONTEXT_LENGTH),
        options.compressionThresholdTokens && options.compressionThresholdTokens > 0
          ? options.compressionThresholdTokens
          : Number.POSITIVE_INFINITY,
      );
  const systemFor = (prompt: string, turnOptions: RunTurnOptions) =>
    turnOptions.ephemeralSystemNote ? `${prompt}\n\n${turnOptions.ephemeralSystemNote}` : prompt;

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
    assertRunId(turnOptions.runId);
    const { main, fallbacks, warnings } = resolveRoutes();
    const fresh = turnOptions.newSession;
    let sessionId = turnOptions.sessionId;
    let lineageRoot = sessionId;
    if (!fresh) {
      const requested = store.getSession(turnOptions.sessionId);
      if (!requested)
        throw new AgentError({
          code: 'session_not_found',
          message: AGENT_ERROR_MESSAGES.sessionNotFound(turnOptions.sessionId),
        });
      sessionId = store.getCompressionTip(turnOptions.sessionId);
      lineageRoot =
        sessionId === requested.id
          ? requested.lineageRootId
          : (store.getSession(sessionId)?.lineageRootId ?? sessionId);
    }
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
    let opened: Opened | undefined;
    let holder: string | null;
    let early: EarlyCall | undefined;
    /** Where the turn's rows start (`run.started`); read under the lease when `beginTurn` failed. */
    let previousMessageId: number | undefined;
    if (fresh) {
      ({ opened, holder, early, previousMessageId } = await openNewSession(turnOptions, fresh, {
        sessionId,
        main,
        fallbacks,
        prompt,
        userMessage,
      }));
    } else {
      // One transaction: the lease, the prompt and the user message. Should it fail (short of
      // the database staying locked), the lease is taken alone and the turn stores the rest one
      // write at a time, reporting what fails as a failed turn.
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
        previousMessageId = began?.previousMessageId;
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
    }
    if (holder === null)
      throw new AgentError({
        code: 'session_busy',
        message: AGENT_ERROR_MESSAGES.sessionBusy(turnOptions.sessionId),
      });
    return await runWithLease({
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
      early,
      holder,
      previousMessageId,
    });
  }

  /**
   * A new conversation's opening transaction (the session, its prompt, the client's earlier
   * messages and this turn's, the lease), with the first model call sent before it when nothing
   * in that call waits on the store: not when the first call would compress, not when the turn is
   * already stopped. Throws — nothing stored, the call aborted — when the transaction fails.
   */
  async function openNewSession(
    turnOptions: RunTurnOptions,
    fresh: NonNullable<RunTurnOptions['newSession']>,
    input: {
      sessionId: string;
      main: ModelRoute;
      fallbacks: readonly ModelRoute[];
      prompt: { text: string } | { error: unknown };
      userMessage: MessageInput | undefined;
    },
  ): Promise<{
    opened: Opened | undefined;
    holder: string;
    early: EarlyCall | undefined;
    previousMessageId: number;
  }> {
    const { sessionId, main, prompt, userMessage } = input;
    const { history = [], ...fields } = fresh;
    const seeded = userMessage ? [...history, userMessage] : [...history];
    let early: EarlyCall | undefined;
    if (
      'text' in prompt &&
      maxIterations > 0 &&
      !turnOptions.signal?.aborted &&
      !turnOptions.control?.shouldStop?.()
    ) {
      // Provisional row ids: only the content goes into the request.
      const builder = new TranscriptBuilder();
      builder.add(seeded.map((message, index) => storedRow(index + 1, message)));
      const { messages, chars } = builder.snapshot();
      const system = systemFor(prompt.text, turnOptions);
      if (
        !needsCompression(
          main,
          messageChars({ role: 'system', content: system }) + chars + toolChars,
        )
      ) {
        early = startEarlyCall(clientFor(main, input.fallbacks), {
          messages: [{ role: 'system', content: system }, ...messages],
          tools: toolSchemas,
          sessionId,
          signal: turnOptions.signal,
        });
        // Let the request reach its socket before the transaction holds the thread.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    let began: BeganTurn | null;
    try {
      began = await store.beginTurn(sessionId, {
        create: {
          source: platform,
          cwd,
          ...(main.model ? { model: main.model } : {}),
          ...fields,
        },
        ...('text' in prompt ? { systemPrompt: prompt.text } : {}),
        ...(seeded.length > 0 ? { messages: seeded } : {}),
      });
    } catch (error) {
      early?.abort();
      if (SessionStoreError.isInstance(error) && error.code === 'session_exists')
        throw new AgentError({
          code: 'session_exists',
          message: AGENT_ERROR_MESSAGES.sessionExists(sessionId),
          cause: error,
        });
      throw error;
    }
    if (began === null) {
      // Not possible for a session this transaction created; refused as any busy session.
      early?.abort();
      throw new AgentError({
        code: 'session_busy',
        message: AGENT_ERROR_MESSAGES.sessionBusy(sessionId),
      });
    }
    const ids = began.messageIds;
    const messageId = userMessage ? ids.at(-1) : undefined;
    return {
      holder: began.holder,
      early,
      // The client's earlier messages are not this turn's: it starts after the last of them.
      previousMessageId:
        history.length > 0 ? (ids[history.length - 1] ?? 0) : began.previousMessageId,
      opened:
        'text' in prompt
          ? {
              ...(messageId === undefined ? {} : { messageId }),
              transcript: began.transcript,
              appended: {
                previousMessageId: began.previousMessageId,
                rows: seeded.map((message, index) => storedRow(ids[index] ?? 0, message)),
              },
            }
          : undefined,
    };
  }

  /** Runs the turn under the lease `holder` took, renewing it, and lets it go at the end. */
  async function runWithLease(
    input: Omit<Parameters<typeof runLeased>[0], 'lease' | 'previousMessageId'> & {
      holder: string;
      /** From the opening transaction; undefined when the lease was taken alone. */
      previousMessageId: number | undefined;
    },
  ): Promise<TurnResult> {
    const { holder, previousMessageId, ...rest } = input;
    const lease = { holder, sessionId: input.sessionId, released: false };
    const renew = setInterval(
      () => {
        store.renewTurnLease(lease.sessionId, holder).catch(() => {});
      },
      (TURN_LEASE_TTL_SECONDS * 1000) / 3,
    );
    renew.unref();
    try {
      return await runLeased({
        ...rest,
        lease,
        // Read under the lease, before the turn stores anything: no other turn writes meanwhile.
        previousMessageId:
          previousMessageId ?? store.getTranscriptMark(input.sessionId).lastMessageId,
      });
    } finally {
      clearInterval(renew);
      input.early?.abort();
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
    /** The first model call, already sent (a new conversation; see `openNewSession`). */
    early: EarlyCall | undefined;
    /** The turn lease: follows the session into a compression child; `released` once let go. */
    lease: { readonly holder: string; sessionId: string; released: boolean };
    /** The session's newest row before the turn's own (`run.started`). */
    previousMessageId: number;
  }): Promise<TurnResult> {
    const { turnOptions, main, turnCwd, lease } = input;
    const runId = turnOptions.runId ?? `run_${randomUUID().replaceAll('-', '')}`;
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

    emit({
      type: 'run.started',
      provider: main.provider,
      model: main.model,
      depth,
      previousMessageId: input.previousMessageId,
    });
    for (const warning of input.warnings)
      emit({ type: 'warning', code: 'fallback_skipped', message: warning });
    let early = input.early;
    early?.attach(emit);

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
      const system = systemFor(systemPrompt, turnOptions);
      let iterations = 0;
      // At most one compression per turn: if the tools and the kept tail alone pass the
      // threshold, compressing again would only loop.
      let compressionTried = false;
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
          !early &&
          !compressionTried &&
          needsCompression(main, systemChars + historyChars + (grace ? 0 : toolChars))
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
        const first = early;
        early = undefined;
        const turn = first?.turn ?? emptyModelTurn();
        try {
          if (first) await first.done;
          else
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
            // The stopped call was made (and may be billed): it counts, with any usage it sent.
            addUsage(usage, turn.usage);
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
          // So does every request of a call that failed (`turn.usage.apiCalls`).
          addUsage(usage, turn.usage);
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

const RUN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's run id goes into events, logs and delegated work's records: a plain token only. */
function assertRunId(runId: unknown): void {
  if (runId === undefined || (typeof runId === 'string' && RUN_ID.test(runId))) return;
  throw new TypeError(
    'runTurn: runId must be a string of 1-128 characters from A-Z, a-z, 0-9, ".", "_", ":", "-"',
  );
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
