/**
 * The end-reason catalogue. Each set is defined once; SQL statements interpolate the rendered
 * `*_SQL` lists so literals in queries cannot drift from these arrays.
 */

/** Ends that start a fresh conversation for the same peer. */
export const RESET_END_REASONS = [
  'session_reset',
  'session_switch',
  'idle',
  'daily',
  'suspended',
  'resume_pending_expired',
] as const;

/** Explicit user boundaries: the reset set plus `new_session`. */
export const BOUNDARY_END_REASONS = [...RESET_END_REASONS, 'new_session'] as const;

/** Ends produced by machinery by accident; a canonical chat ended this way may be resurrected. */
export const RECOVERABLE_END_REASONS = [
  'agent_close',
  'ws_orphan_reap',
  'superseded_by_resume',
  'startup_orphan_reap',
] as const;

/** Every end produced by machinery rather than a person (recoverable set included). */
export const AUTOMATIC_END_REASONS = [
  ...RECOVERABLE_END_REASONS,
  'tui_shutdown',
  'ws_disconnect',
  'idle_timeout',
  'lru_evict',
] as const;

/** Other reasons with a fixed meaning. */
export const END_REASON = {
  compression: 'compression',
  branched: 'branched',
  orphanedCompression: 'orphaned_compression',
  supersededByRepair: 'superseded_by_repair',
  tuiClose: 'tui_close',
  sessionReset: 'session_reset',
  newSession: 'new_session',
} as const;

export type ResetEndReason = (typeof RESET_END_REASONS)[number];
export type RecoverableEndReason = (typeof RECOVERABLE_END_REASONS)[number];
export type AutomaticEndReason = (typeof AUTOMATIC_END_REASONS)[number];

const SAFE_LITERAL = /^[a-z_]+$/;

/** Renders a list of identifiers as a quoted SQL list for `IN (…)`; refuses anything but [a-z_]. */
export function toSqlList(values: readonly string[]): string {
  return values
    .map((value) => {
      if (!SAFE_LITERAL.test(value)) throw new Error(`unsafe SQL literal: ${value}`);
      return `'${value}'`;
    })
    .join(', ');
}

export const RESET_END_REASONS_SQL = toSqlList(RESET_END_REASONS);
export const BOUNDARY_END_REASONS_SQL = toSqlList(BOUNDARY_END_REASONS);
export const RECOVERABLE_END_REASONS_SQL = toSqlList(RECOVERABLE_END_REASONS);
export const AUTOMATIC_END_REASONS_SQL = toSqlList(AUTOMATIC_END_REASONS);

export function isRecoverableEndReason(reason: string | null | undefined): boolean {
  return (RECOVERABLE_END_REASONS as readonly string[]).includes(reason ?? '');
}

export function isAutomaticEndReason(reason: string | null | undefined): boolean {
  return (AUTOMATIC_END_REASONS as readonly string[]).includes(reason ?? '');
}
