import { type AUTOMATIC_END_REASONS, END_REASON } from '@hermes/session-store';

/** `session.close`: a person closed it. */
export const CLOSE_END_REASON = END_REASON.tuiClose;

/** The bridge stopped with the session open: machinery, so a later lookup may bring it back. */
export const SHUTDOWN_END_REASON = 'tui_shutdown' satisfies (typeof AUTOMATIC_END_REASONS)[number];

/** `session.list` default page: the reference's TUI default, and the largest page (SESSION_LIST_MAX_LIMIT). */
export const SESSION_LIST_DEFAULT_LIMIT = 200;

/** Sources whose rows an exact-title lookup never returns (internal machinery, subagents). */
export const DENIED_TITLE_SOURCES: readonly string[] = ['tool', 'kanban', 'oneshot', 'subagent'];

/** How long stdio EOF waits for running turns before interrupting them (ms). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 300_000;
