import { randomUUID } from 'node:crypto';
import { type MessageInput, TURN_LEASE_TTL_SECONDS } from '@hermes/session-store';
import { compressSession } from '../compression/compress-session.js';
import { messageChars } from '../compression/estimate-tokens.js';
import { AgentError } from '../errors.js';
import type { AgentEvent } from '../events.js';
import { addUsage, type ChatMessage, emptyModelTurn, emptyUsage } from '../model/chat-message.js';
import type { ModelRoute } from '../model/model-route.js';
import type { ToolContext } from '../tools/tool-context.js';
import { type AgentInternals, turnSystemPrompt } from './agent-internals.js';
import type { RouteWarning } from './agent-model.js';
import type { RunTurnOptions, TurnResult } from './agent-types.js';
import type { EarlyCall, Emit } from './early-call.js';
import type { Opened, TurnPrompt } from './open-turn.js';
import { runToolCalls } from './run-tool-calls.js';
import {
  EMPTY_RESPONSE_SENTINEL,
  failed,
  GRACE_CALL_NOTE,
  interrupted,
  steerNote,
} from './turn-outcome.js';
import { createTurnRecorder, type TurnLease } from './turn-recorder.js';

/** A turn whose opening transaction (or lease alone) is done, ready to run under the lease. */
export interface LeasedTurnInput {
  readonly turnOptions: RunTurnOptions;
  readonly main: ModelRoute;
  readonly fallbacks: readonly ModelRoute[];
  readonly warnings: readonly RouteWarning[];
  readonly sessionId: string;
  /** The conversation's lineage root (keys the tools' per-conversation state). */
  readonly lineageRoot: string;
  readonly turnCwd: string;
  readonly prompt: TurnPrompt;
  readonly userMessage: MessageInput | undefined;
  /** What `beginTurn` stored (absent when it failed and the turn stores it itself). */
  readonly opened: Opened | undefined;
  /** The first model call, already sent (a new conversation; see `openNewSession`). */
  readonly early: EarlyCall | undefined;
  /** The lease's holder id. */
  readonly holder: string;
  /** From the opening transaction; undefined when the lease was taken alone. */
  readonly previousMessageId: number | undefined;
}

/** Runs the turn under the lease `holder` took, renewing it, and lets it go at the end. */
export async function runWithLease(
  internals: AgentInternals,
  input: LeasedTurnInput,
): Promise<TurnResult> {
  const { store } = internals;
  const { holder, previousMessageId, ...rest } = input;
  const lease: TurnLease = { holder, sessionId: input.sessionId, released: false };
  const renew = setInterval(
    () => {
      store.renewTurnLease(lease.sessionId, holder).catch(() => {});
    },
    (TURN_LEASE_TTL_SECONDS * 1000) / 3,
  );
  renew.unref();
  try {
    return await runLeased(internals, {
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

async function runLeased(
  internals: AgentInternals,
  input: Omit<LeasedTurnInput, 'holder' | 'previousMessageId'> & {
    /** The turn lease: follows the session into a compression child; `released` once let go. */
    readonly lease: TurnLease;
    /** The session's newest row before the turn's own (`run.started`). */
    readonly previousMessageId: number;
  },
): Promise<TurnResult> {
  const { agent, config, store, home, platform, depth, secret, maxIterations } = internals;
  const { toolsByName, toolSchemas, toolChars, transcripts, sessionStates } = internals;
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
    emit({ type: 'warning', code: warning.code, message: warning.message });
  let early = input.early;
  early?.attach(emit);

  let partial = '';
  const usedTools = new Set<string>();
  const recorder = createTurnRecorder({
    store,
    lease,
    main,
    usage,
    usedTools,
    sessionId: () => sessionId,
    runId,
    emit,
  });
  const { append, storeLast, finish } = recorder;

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
    const client = internals.model.client(main, input.fallbacks);
    const system = turnSystemPrompt(systemPrompt, turnOptions);
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
        internals.needsCompression(main, systemChars + historyChars + (grace ? 0 : toolChars))
      ) {
        compressionTried = true;
        try {
          // Compression reads the transcript from the store: every result goes in first.
          if (recorder.hasDeferred()) await append([]);
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
          approve: (request) => internals.approve(request, call.function.name, sessionId, signal),
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
          // A call with effects is on record before the turn goes on; see `TurnRecorder.defer`.
          if (toolsByName.get(call.function.name)?.readOnly) recorder.defer(message);
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
