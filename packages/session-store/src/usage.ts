import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';
import type { StoreContext } from './store-context.js';
import { NonNegativeInteger, NonNegativeNumber, parseInput } from './validation.js';

/** An empty string means "not known": it leaves the stored value as it is. */
const OptionalText = v.optional(v.string());

/** What one model call (or a batch of them) used. Counters are added; names are replaced. */
const UsageSchema = v.strictObject({
  inputTokens: v.optional(NonNegativeInteger),
  outputTokens: v.optional(NonNegativeInteger),
  cacheReadTokens: v.optional(NonNegativeInteger),
  cacheWriteTokens: v.optional(NonNegativeInteger),
  reasoningTokens: v.optional(NonNegativeInteger),
  apiCalls: v.optional(NonNegativeInteger),
  toolCalls: v.optional(NonNegativeInteger),
  estimatedCostUsd: v.optional(NonNegativeNumber),
  model: OptionalText,
  billingProvider: OptionalText,
  billingBaseUrl: OptionalText,
  toolNames: v.optional(v.array(v.pipe(v.string(), v.minLength(1, 'a non-empty tool name')))),
});

/** What one model call (or a batch of them) used; see `SessionStore.recordUsage`. */
export interface UsageInput {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  apiCalls?: number;
  /** Adds to the same counter stored assistant messages' `toolCalls` raise. */
  toolCalls?: number;
  estimatedCostUsd?: number;
  /** Replaces the stored model; empty leaves it. */
  model?: string;
  billingProvider?: string;
  billingBaseUrl?: string;
  /** Merged into the session's sorted, de-duplicated list. */
  toolNames?: string[];
}

/** @internal The schema's input type, checked against `UsageInput` in the tests. */
export type UsageSchemaInput = v.InferInput<typeof UsageSchema>;

/**
 * The session columns a usage changes, as UPDATE assignments over the `@`-named parameters
 * `usageParameters` returns — all but `tool_call_count`, which stored assistant messages raise too:
 * a statement adds `@toolCalls` to it itself. Counters are added; `model` / `billing*` replace
 * the stored values unless empty; `toolNames` is merged into the sorted, de-duplicated JSON list.
 */
export const USAGE_ASSIGNMENTS = `input_tokens = input_tokens + @inputTokens,
  output_tokens = output_tokens + @outputTokens,
  cache_read_tokens = cache_read_tokens + @cacheReadTokens,
  cache_write_tokens = cache_write_tokens + @cacheWriteTokens,
  reasoning_tokens = reasoning_tokens + @reasoningTokens,
  api_call_count = api_call_count + @apiCalls,
  estimated_cost_usd = estimated_cost_usd + @estimatedCostUsd,
  model = coalesce(nullif(@model, ''), model),
  billing_provider = coalesce(nullif(@billingProvider, ''), billing_provider),
  billing_base_url = coalesce(nullif(@billingBaseUrl, ''), billing_base_url),
  tool_names = CASE WHEN @toolNames IS NULL THEN tool_names ELSE (
    SELECT json_group_array(value) FROM (
      SELECT value FROM json_each(coalesce(tool_names, '[]'))
      UNION SELECT value FROM json_each(@toolNames) ORDER BY value)) END`;

/** A validated usage: the parameters of `USAGE_ASSIGNMENTS` and the tool calls it adds. */
export interface UsageParameters {
  readonly parameters: Readonly<Record<string, number | string | null>>;
  readonly toolCalls: number;
}

/** Validates a usage (`invalid_argument` naming the field) into `USAGE_ASSIGNMENTS`'s parameters. */
export function usageParameters(input: UsageInput): UsageParameters {
  const usage = parseInput(UsageSchema, input, 'usage');
  return {
    parameters: {
      inputTokens: usage.inputTokens ?? 0,
      outputTokens: usage.outputTokens ?? 0,
      cacheReadTokens: usage.cacheReadTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      reasoningTokens: usage.reasoningTokens ?? 0,
      apiCalls: usage.apiCalls ?? 0,
      estimatedCostUsd: usage.estimatedCostUsd ?? 0,
      model: usage.model ?? null,
      billingProvider: usage.billingProvider ?? null,
      billingBaseUrl: usage.billingBaseUrl ?? null,
      toolNames:
        usage.toolNames && usage.toolNames.length > 0 ? JSON.stringify(usage.toolNames) : null,
    },
    toolCalls: usage.toolCalls ?? 0,
  };
}

/**
 * Adds usage to a session's counters in one UPDATE (atomic across processes). `toolNames` is
 * merged into the session's sorted, de-duplicated JSON list. Call inside a write transaction.
 * Returns the session's lineage root.
 */
export function recordUsage(context: StoreContext, sessionId: string, input: UsageInput): string {
  const usage = usageParameters(input);
  const lineageRootId = context
    .statement(
      `UPDATE sessions SET ${USAGE_ASSIGNMENTS}, tool_call_count = tool_call_count + @toolCalls
       WHERE id = @id RETURNING lineage_root_id`,
    )
    .pluck()
    .get({ ...usage.parameters, toolCalls: usage.toolCalls, id: sessionId }) as string | undefined;
  if (lineageRootId === undefined) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(sessionId),
    });
  }
  return lineageRootId;
}

export function systemPromptHash(prompt: string): string {
  return createHash('sha256').update(prompt, 'utf8').digest('hex');
}

/**
 * Stores the prompt once by content hash and points the session at it; a prompt no session
 * refers to any more is removed. `null` clears it. Call inside a write transaction.
 */
export function setSessionSystemPrompt(
  context: StoreContext,
  sessionId: string,
  prompt: string | null,
): void {
  if (prompt !== null && typeof prompt !== 'string') {
    throw new SessionStoreError({
      code: 'invalid_argument',
      message: ERROR_MESSAGES.invalidArgument('prompt', 'a string or null'),
    });
  }
  const previous = context
    .statement('SELECT system_prompt_hash AS hash FROM sessions WHERE id = ?')
    .get(sessionId) as { hash: string | null } | undefined;
  if (!previous) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(sessionId),
    });
  }
  const hash = prompt === null ? null : systemPromptHash(prompt);
  if (hash !== null && prompt !== null) storeSystemPromptText(context, hash, prompt);
  context.statement('UPDATE sessions SET system_prompt_hash = ? WHERE id = ?').run(hash, sessionId);
  if (previous.hash !== null && previous.hash !== hash)
    dropUnusedSystemPrompt(context, previous.hash);
}

/**
 * Stores a prompt's text under its hash (`systemPromptHash(prompt)`) unless it is stored already
 * — then nothing is written. Call inside the write transaction that points a session at it.
 */
export function storeSystemPromptText(context: StoreContext, hash: string, prompt: string): void {
  context
    .statement(
      'INSERT INTO system_prompts (hash, prompt) VALUES (?, ?) ON CONFLICT(hash) DO NOTHING',
    )
    .run(hash, prompt);
}

/** Removes a stored prompt once no session refers to it. */
export function dropUnusedSystemPrompt(context: StoreContext, hash: string): void {
  context
    .statement(
      'DELETE FROM system_prompts WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM sessions WHERE system_prompt_hash = ?)',
    )
    .run(hash, hash);
}

export function getSessionSystemPrompt(context: StoreContext, sessionId: string): string | null {
  const row = context
    .statement(
      `SELECT p.prompt AS prompt FROM sessions s LEFT JOIN system_prompts p ON p.hash = s.system_prompt_hash
       WHERE s.id = ?`,
    )
    .get(sessionId) as { prompt: string | null } | undefined;
  if (!row) {
    throw new SessionStoreError({
      code: 'session_not_found',
      message: ERROR_MESSAGES.sessionNotFound(sessionId),
    });
  }
  return row.prompt;
}
