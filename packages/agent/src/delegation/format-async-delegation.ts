import type { ChildResult } from './child-result.js';
import type { AsyncDelegationEvent } from './completion-event.js';
import { DELEGATION_NOTES } from './delegation-messages.js';
import { truncateSummary } from './run-batch.js';

/** How a finished subagent's work should be read (§6.10). */
export type ResultOutcome =
  | 'unverified'
  | 'partial'
  | 'failed'
  | 'interrupted'
  | 'timed_out'
  | 'stalled'
  | 'unknown';

export const OUTCOME_ICONS: Readonly<Record<ResultOutcome, string>> = {
  unverified: '✓',
  partial: '◐',
  failed: '✗',
  interrupted: '⏹',
  timed_out: '⏱',
  stalled: '⏸',
  unknown: '?',
};

/** The first line of every injected completion starts with this. */
export const ASYNC_DELEGATION_PREFIX = '[ASYNC DELEGATION';

export const COMPLETION_EXPLANATION = [
  'This is the result of work you delegated earlier with delegate_task; the conversation may have moved on since.',
  'A finished subagent is NOT an accepted task: its summary is a self-report — verify the files, commands and claims it names before you rely on them or tell the user it is done.',
].join('\n');

/** `completed` self-reports are unverified; truncated or interrupted runs with output are partial. */
export function deriveResultOutcome(
  entry: Pick<ChildResult, 'status' | 'summary' | 'truncated'>,
): ResultOutcome {
  const hasOutput = entry.summary !== null && entry.summary.trim() !== '';
  switch (entry.status) {
    case 'completed':
      return entry.truncated ? 'partial' : hasOutput ? 'unverified' : 'failed';
    case 'interrupted':
      return hasOutput ? 'partial' : 'interrupted';
    case 'timeout':
      return hasOutput ? 'partial' : 'timed_out';
    case 'stalled':
      return 'stalled';
    case 'unknown':
      return 'unknown';
    default:
      return 'failed';
  }
}

/** The header of a rendered completion (`[ASYNC DELEGATION BATCH COMPLETE — <id>]`). */
export function completionHeader(delegationId: string, batch = true): string {
  return `${ASYNC_DELEGATION_PREFIX} ${batch ? 'BATCH ' : ''}COMPLETE — ${delegationId}]`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

function localStamp(epochSeconds: number): string {
  const date = new Date(epochSeconds * 1000);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function age(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m ${whole % 60}s`;
  return `${Math.floor(whole / 3600)}h ${Math.floor((whole % 3600) / 60)}m`;
}

export interface FormatAsyncDelegationOptions {
  /** Epoch seconds "now" (for the age); default the clock. */
  readonly now?: number;
  /** Per-summary cap (`delegation.max_summary_chars`, default 24,000; 0 = none). */
  readonly maxSummaryChars?: number;
}

function renderSummary(entry: ChildResult, cap: number): string {
  const summary = entry.summary ?? '';
  if (summary.trim() === '') return '(no summary)';
  if (cap > 0 && summary.length > cap && !entry.summary_truncated)
    return truncateSummary(summary, cap, entry.summary_full_path);
  return summary;
}

function outcomeNote(entry: ChildResult, outcome: ResultOutcome): string | undefined {
  switch (outcome) {
    case 'partial':
      return `[PARTIAL — the subagent stopped before finishing (${entry.truncated ? 'iteration limit' : entry.status}); treat the work above as incomplete.]`;
    case 'unverified':
      return undefined;
    default:
      return `[${outcome.toUpperCase().replace('_', ' ')} — ${entry.error ?? 'no result'}]`;
  }
}

function taskBlock(entry: ChildResult, position: number, total: number, cap: number): string {
  const outcome = deriveResultOutcome(entry);
  const extras = [
    `outcome=${outcome}`,
    `status=${entry.status}`,
    `api_calls=${entry.api_calls}`,
    `${Math.round(entry.duration_seconds)}s`,
    ...(entry.truncated ? ['TRUNCATED at the iteration limit'] : []),
  ];
  const lines = [
    `--- ${OUTCOME_ICONS[outcome]} TASK ${position}/${total}: ${entry.goal}  (${extras.join(', ')}) ---`,
    renderSummary(entry, cap),
  ];
  const note = outcomeNote(entry, outcome);
  if (note) lines.push(note);
  if (entry.summary_full_path) lines.push(`Full summary: ${entry.summary_full_path}`);
  if (entry.session_id) lines.push(`Full subagent transcript: session ${entry.session_id}`);
  return lines.join('\n');
}

/**
 * Renders a completion as the new turn it becomes (§6.10): `[ASYNC DELEGATION BATCH COMPLETE —
 * <id>]`, the explanation, what was dispatched, then one block per task with its outcome icon,
 * status and summary (capped, truncation disclosed). A non-batch event renders the single form,
 * `[ASYNC DELEGATION COMPLETE — <id>]` with `--- RESULT ---`.
 */
export function formatAsyncDelegation(
  event: AsyncDelegationEvent,
  options: FormatAsyncDelegationOptions = {},
): string {
  const now = options.now ?? Date.now() / 1000;
  const cap = options.maxSummaryChars ?? 24_000;
  const dispatched = `Dispatched: ${localStamp(event.dispatched_at)} (${age(now - event.dispatched_at)} ago)`;
  const context = `Context you provided: ${event.context.trim() === '' ? '(none)' : event.context}`;
  const toolsets = `Toolsets: ${event.toolsets.length > 0 ? event.toolsets.join(', ') : '(none)'}`;
  const roleModel = `Role: ${event.role}  Model: ${event.model || '(inherited)'}`;
  const lines: string[] = [];
  const resumed =
    event.resumed && event.resumed > 0 ? [DELEGATION_NOTES.resumed(event.resumed)] : [];
  if (event.is_batch || event.results.length !== 1) {
    lines.push(completionHeader(event.delegation_id), COMPLETION_EXPLANATION, dispatched);
    lines.push(
      ...resumed,
      context,
      toolsets,
      roleModel,
      `Total duration: ${event.total_duration_seconds}s`,
    );
    if (event.status === 'stalled' || event.status === 'unknown')
      lines.push(`Status: ${event.status}${event.error ? ` — ${event.error}` : ''}`);
    const total = Math.max(event.results.length, event.goals.length);
    for (const [position, entry] of event.results.entries())
      lines.push('', taskBlock(entry, position + 1, total, cap));
    return lines.join('\n');
  }
  const entry = event.results[0] as ChildResult;
  const outcome = deriveResultOutcome(entry);
  lines.push(completionHeader(event.delegation_id, false), COMPLETION_EXPLANATION, dispatched);
  lines.push(...resumed, `Original goal: ${event.goal}`, context, toolsets, roleModel);
  lines.push(
    `Outcome: ${outcome}  Status: ${entry.status}  API calls: ${entry.api_calls}  Duration: ${Math.round(entry.duration_seconds)}s${entry.truncated ? '  [TRUNCATED at the iteration limit]' : ''}`,
  );
  lines.push('--- RESULT ---', renderSummary(entry, cap));
  const note = outcomeNote(entry, outcome);
  if (note) lines.push(note);
  return lines.join('\n');
}
