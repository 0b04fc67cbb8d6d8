import type { FunctionSchema } from '../model/function-schema.js';
import type { ModelRoute } from '../model/model-route.js';
import type { SecretReader } from '../model/resolve-runtime-provider.js';
import type { Tool } from '../tools/define-tool.js';
import type { ApprovalDecision, ToolContext } from '../tools/tool-context.js';
import type { AgentModel } from './agent-model.js';
import type { Agent, RunTurnOptions } from './agent-types.js';
import type { TranscriptCache } from './transcript.js';

/** The settings an agent exposes that its turns read as well (one object serves both). */
export type AgentSettings = Pick<
  Agent,
  'config' | 'store' | 'home' | 'platform' | 'depth' | 'cwd' | 'maxIterations' | 'options'
>;

/**
 * What `createAgent` settles once per agent and its turns share: the parts of a turn (opening it,
 * running it under its lease) each take the few fields they use.
 */
export interface AgentInternals extends AgentSettings {
  readonly agent: Agent;
  readonly secret: SecretReader;
  readonly toolsByName: ReadonlyMap<string, Tool>;
  readonly toolSchemas: readonly FunctionSchema[];
  /** The tools' share of the prompt-size estimate, in characters (constant per agent). */
  readonly toolChars: number;
  readonly transcripts: TranscriptCache;
  /** The tools' per-conversation state, by lineage root. */
  readonly sessionStates: Map<string, Map<string, unknown>>;
  readonly model: AgentModel;
  /**
   * Whether a request of `chars` serialised characters (system prompt, history, tools) is over
   * the prompt-size estimate (tokens) above which a turn compresses first.
   */
  needsCompression(main: ModelRoute, chars: number): boolean;
  /** Asks the agent's `approve` callback, denying on none, an error or no answer in time. */
  approve(
    request: Parameters<ToolContext['approve']>[0],
    toolName: string,
    sessionId: string,
    signal: AbortSignal,
  ): Promise<ApprovalDecision>;
}

/** The system prompt a turn sends: the stored prompt plus the turn's ephemeral note (never stored). */
export function turnSystemPrompt(prompt: string, turnOptions: RunTurnOptions): string {
  return turnOptions.ephemeralSystemNote
    ? `${prompt}\n\n${turnOptions.ephemeralSystemNote}`
    : prompt;
}
