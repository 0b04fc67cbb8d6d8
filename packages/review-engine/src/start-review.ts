import { buildReviewTask } from './build-review-task.js';
import { collectLoadedSkills } from './collect-loaded-skills.js';
import type { DelegationDispatch, DelegationRail, ReviewOrigin } from './delegation-rail.js';
import { collectGitChanges, type GitChanges, type GitOptions } from './git/collect-git-changes.js';
import { parseReviewRequest, type ReviewTarget } from './git/review-target.js';
import { isRecord } from './message-text.js';
import {
  type ReviewConfigInput,
  resolveReviewFallbackProviders,
  resolveReviewRouting,
} from './resolve-review-routing.js';
import { ReviewEngineError } from './review-engine-error.js';
import {
  DISPATCH_FAILED_PREFIX,
  EMPTY_CONVERSATION_MESSAGE,
  NO_ACTIVE_AGENT_MESSAGE,
} from './review-messages.js';
import { ReviewRefusal } from './review-refusal.js';
import { snapshotRecentMessages } from './snapshot-recent-messages.js';

export interface StartReviewOptions {
  /** The conversation so far, OpenAI-format messages (or stored rows), oldest first. */
  readonly messages: readonly unknown[];
  /**
   * What the user typed after `/review`: free-form instructions, or a git target
   * (`uncommitted`, `base <branch>`, `commit <sha>`) followed by instructions.
   */
  readonly instructions?: string | undefined;
  /** The primary agent's delegation rail; none means there is no agent to review for. */
  readonly rail: DelegationRail | null | undefined;
  /** Holds `auxiliary.review` (raw `config.yaml` mapping or loaded `HermesConfig`); read on every call. */
  readonly config?: ReviewConfigInput | null | undefined;
  /** Skill names the caller knows are loaded (listed first in the briefing). */
  readonly skills?: readonly string[] | undefined;
  /** The primary agent's system prompt, scanned for launch-time skill preloads. */
  readonly systemPrompt?: string | undefined;
  /** Where the completion must come back to; handed to the rail unchanged. */
  readonly origin?: ReviewOrigin | undefined;
  /** The session's working directory, for git targets (default `process.cwd()`). */
  readonly cwd?: string | undefined;
  /** git program, per-command timeout and diff size cap (defaults: `git`, 20 s, 100,000 characters). */
  readonly git?: GitOptions | undefined;
}

/** A review the rail accepted. */
export interface ReviewStarted {
  /** `dispatched`: running in the background; `completed`: the rail ran it synchronously. */
  readonly status: 'dispatched' | 'completed';
  readonly mode: 'background' | 'sync';
  readonly delegationId: string;
  /** The reviewer's label. */
  readonly goal: string;
  readonly target: ReviewTarget;
  /** The user's instructions without the git target words. */
  readonly instructions: string;
  /** The skills named in the briefing. */
  readonly skills: readonly string[];
  /** The rail's model, else the pinned review model, else `''` (inherited). */
  readonly reviewModel: string;
  readonly note?: string | undefined;
  /** The finished review, when `status` is `completed`. */
  readonly result?: unknown;
}

const REPR_MAX_CHARS = 500;

function repr(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  text ??= String(value);
  return text.length > REPR_MAX_CHARS ? `${text.slice(0, REPR_MAX_CHARS - 1)}…` : text;
}

/** The rail's answer as a dispatch, or the refusal it stands for. */
function interpretOutcome(outcome: unknown): DelegationDispatch {
  if (
    isRecord(outcome) &&
    'error' in outcome &&
    typeof outcome.error === 'string' &&
    outcome.error.trim() !== ''
  )
    throw new ReviewRefusal('dispatch_refused', outcome.error);
  if (
    isRecord(outcome) &&
    typeof outcome.delegationId === 'string' &&
    outcome.delegationId.length > 0 &&
    (outcome.mode === 'background' || outcome.mode === 'sync')
  )
    return outcome as unknown as DelegationDispatch;
  throw new ReviewRefusal('dispatch_failed', `${DISPATCH_FAILED_PREFIX}${repr(outcome)}`);
}

/**
 * Starts an independent reviewer over the recent conversation: snapshot (last 10 user/assistant
 * messages), loaded skills, the git diff for a git target, the briefing, the route from
 * `auxiliary.review`, then one `rail.dispatch` (marked `resumable`). Refuses with a `ReviewRefusal` whose message is for
 * the user: `No active agent — send a message first.` (no rail), `Nothing to review yet — the
 * conversation is empty.`, the usage and git texts, the rail's own `error`, or `Review dispatch
 * failed: …` for an answer that is neither. A git-target review needs no conversation.
 */
export async function startReview(options: StartReviewOptions): Promise<ReviewStarted> {
  if (options.rail === null || options.rail === undefined)
    throw new ReviewRefusal('no_active_agent', NO_ACTIVE_AGENT_MESSAGE);
  if (!Array.isArray(options.messages))
    throw new ReviewEngineError({
      code: 'invalid_argument',
      message: 'startReview: messages must be an array',
    });
  const request = parseReviewRequest(options.instructions ?? '');
  const snapshot = snapshotRecentMessages(options.messages);
  if (snapshot.length === 0 && request.target.kind === 'conversation')
    throw new ReviewRefusal('empty_conversation', EMPTY_CONVERSATION_MESSAGE);
  let git: GitChanges | undefined;
  if (request.target.kind !== 'conversation')
    git = await collectGitChanges(request.target, {
      ...options.git,
      cwd: options.cwd ?? process.cwd(),
    });
  const skills = collectLoadedSkills(options.messages, {
    preloaded: options.skills,
    systemPrompt: options.systemPrompt,
  });
  const task = buildReviewTask(snapshot, request.instructions, skills, { git });
  const credentialsCfg = resolveReviewRouting(options.config);
  const outcome: unknown = await options.rail.dispatch({
    goal: task.goal,
    context: task.context,
    credentialsCfg,
    fallbackProviders: resolveReviewFallbackProviders(options.config),
    origin: { ...options.origin },
    // A review only investigates: running it again after a restart is safe.
    resumable: true,
  });
  const dispatch = interpretOutcome(outcome);
  const railModel = typeof dispatch.model === 'string' ? dispatch.model : '';
  return {
    status: dispatch.mode === 'background' ? 'dispatched' : 'completed',
    mode: dispatch.mode,
    delegationId: dispatch.delegationId,
    goal: task.goal,
    target: request.target,
    instructions: request.instructions,
    skills,
    reviewModel: railModel || credentialsCfg?.model || '',
    ...(typeof dispatch.note === 'string' ? { note: dispatch.note } : {}),
    ...(dispatch.result !== undefined ? { result: dispatch.result } : {}),
  };
}
