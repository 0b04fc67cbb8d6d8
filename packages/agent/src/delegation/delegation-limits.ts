/** The tool's name and toolset. */
export const DELEGATE_TASK_TOOL_NAME = 'delegate_task';
export const DELEGATION_TOOLSET = 'delegation';

/**
 * Tools a subagent never gets: asking the user, long-term memory, messaging and scheduling stay
 * with the agent that talks to the user. `delegate_task` is blocked for leaf children only.
 */
export const DELEGATE_BLOCKED_TOOLS = [
  'delegate_task',
  'clarify',
  'memory',
  'send_message',
  'cronjob',
  'cronjob_manage',
  'start_chat',
] as const;

/** Images per task. */
export const MAX_TASK_IMAGES = 8;
/** The model-facing description stays under this many characters. */
export const DELEGATE_TASK_DESCRIPTION_MAX_CHARS = 2200;
/** A batch goal shorter than this (with 2 or more tasks) is refused as a placeholder. */
export const MIN_BATCH_GOAL_CHARS = 10;

/** Stall monitor defaults (§6.9): checked every 30 s; 450 s idle / 1200 s in a tool; 120 s grace. */
export const STALL_CHECK_INTERVAL_MS = 30_000;
export const STALL_IDLE_MS = 450_000;
export const STALL_IN_TOOL_MS = 1_200_000;
export const STALL_GRACE_MS = 120_000;
/**
 * A resumable unit (work that is safe to run again, such as a review) whose process died before it
 * finished is run again from its stored task at most this many times; past it, it ends `unknown`
 * like any other unit whose owner died. A graceful stop (a gateway stop or restart, leaving a chat)
 * spends none: it lets go of the unit and the next start runs it again.
 */
export const DELEGATION_MAX_RESUMES = 1;
/**
 * The interrupt reason of a graceful shutdown (`registry.close()`): a resumable unit stopped for it
 * is left running in the ledger for the next start to resume, never finalised `interrupted`.
 */
export const SHUTDOWN_INTERRUPT_REASON = 'shutdown';
/**
 * The config block a per-call routing owner (`credentialsCfg`) comes from: `/review`'s. It names
 * the owner in warnings, and a resumed unit takes that owner's keys from this live block again.
 */
export const CREDENTIALS_ROUTING_OWNER = 'auxiliary.review';
/** The parent hears "subagent running …" this often while a child works inline. */
export const HEARTBEAT_INTERVAL_MS = 30_000;

/** Summary budget: the dynamic per-summary cap never goes below this. */
export const SUMMARY_FLOOR_CHARS = 2000;
/** Share of the parent's remaining context the summaries of one batch may use. */
export const SUMMARY_HEADROOM_SHARE = 0.5;

/** `display_kind` of a completion injected into its conversation. */
export const COMPLETION_DISPLAY_KIND = 'async_delegation';

/** Folders under the home (§2). */
export const TERMINAL_CHECKPOINT_DIR = 'async_delegation_terminals';
export const DELIVERY_CLAIM_DIR = 'async_delegation_claims';
export const SUMMARY_SPILL_DIR = ['cache', 'delegation'] as const;
