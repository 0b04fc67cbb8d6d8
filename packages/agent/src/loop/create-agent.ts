import { getHermesHome, getSecret } from '@hermes/config';
import type { MessageInput } from '@hermes/session-store';
import { CHARS_PER_TOKEN } from '../compression/estimate-tokens.js';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import type { FunctionSchema } from '../model/function-schema.js';
import type { ModelRoute } from '../model/model-route.js';
import { DEFAULT_CONTEXT_LENGTH } from '../model/provider-catalog.js';
import { SystemPromptCache } from '../prompt/system-prompt.js';
import { BUILTIN_TOOLS } from '../tools/builtin-tools.js';
import type { ApprovalDecision } from '../tools/tool-context.js';
import { createToolRegistry } from '../tools/tool-registry.js';
import { listToolsets, resolveToolNames } from '../tools/toolsets.js';
import type { AgentInternals, AgentSettings } from './agent-internals.js';
import { createAgentModel } from './agent-model.js';
import type { Agent, CreateAgentOptions, RunTurnOptions, TurnResult } from './agent-types.js';
import type { EarlyCall } from './early-call.js';
import { type Opened, openExistingSession, openNewSession, type TurnPrompt } from './open-turn.js';
import { runWithLease } from './run-leased-turn.js';
import { TranscriptCache } from './transcript.js';

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
  const prompts = new SystemPromptCache();
  const model = createAgentModel({ options, config, secret, home });

  const approve = async (
    request: Parameters<AgentInternals['approve']>[0],
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

  const needsCompression = (main: ModelRoute, chars: number) =>
    config.compression.enabled &&
    Math.ceil(chars / CHARS_PER_TOKEN) >
      Math.min(
        config.compression.threshold * (main.contextLength ?? DEFAULT_CONTEXT_LENGTH),
        options.compressionThresholdTokens && options.compressionThresholdTokens > 0
          ? options.compressionThresholdTokens
          : Number.POSITIVE_INFINITY,
      );

  const settings: AgentSettings = {
    config,
    store,
    home,
    platform,
    depth,
    cwd,
    maxIterations,
    options,
  };
  const agent: Agent = {
    ...settings,
    tools,
    route: () => model.routes().main,
    fallbackRoutes: () => model.routes().fallbacks,
    listToolsets: () => listToolsets(config, platform, registry),
    createChild: (overrides = {}) =>
      createAgent({ ...options, depth: depth + 1, parent: agent, ...overrides }),
    createSession: (input = {}) => {
      const routes = model.resolvedRoutes();
      return store.createSession({
        source: platform,
        cwd,
        ...(routes ? { model: routes.main.model } : {}),
        ...input,
      });
    },
    runTurn: (turnOptions) => runTurn(turnOptions),
  };

  const internals: AgentInternals = {
    ...settings,
    agent,
    secret,
    toolsByName: new Map(tools.map((tool) => [tool.name, tool])),
    toolSchemas,
    toolChars,
    transcripts: new TranscriptCache(store),
    sessionStates: new Map(),
    model,
    needsCompression,
    approve,
  };

  async function runTurn(turnOptions: RunTurnOptions): Promise<TurnResult> {
    assertRunId(turnOptions.runId);
    const { main, fallbacks, warnings } = model.routes();
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
    let prompt: TurnPrompt;
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
      ({ opened, holder, early, previousMessageId } = await openNewSession(internals, {
        turnOptions,
        fresh,
        sessionId,
        main,
        fallbacks,
        prompt,
        userMessage,
      }));
    } else {
      ({ opened, holder, previousMessageId } = await openExistingSession(store, {
        sessionId,
        prompt,
        userMessage,
      }));
    }
    if (holder === null)
      throw new AgentError({
        code: 'session_busy',
        message: AGENT_ERROR_MESSAGES.sessionBusy(turnOptions.sessionId),
      });
    return await runWithLease(internals, {
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

  return agent;
}

const RUN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's run id goes into events, logs and delegated work's records: a plain token only. */
function assertRunId(runId: unknown): void {
  if (runId === undefined || (typeof runId === 'string' && RUN_ID.test(runId))) return;
  throw new TypeError(
    'runTurn: runId must be a string of 1-128 characters from A-Z, a-z, 0-9, ".", "_", ":", "-"',
  );
}
