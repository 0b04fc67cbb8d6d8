import { getHermesHome, type HermesConfig } from '@hermes/config';
import type { MessageRecord, SessionStore } from '@hermes/session-store';
import { AGENT_ERROR_MESSAGES, AgentError } from '../errors.js';
import { loadMessages, rowToMessageInput } from '../loop/transcript.js';
import { createModelClient } from '../model/model-client.js';
import type { ModelRoute } from '../model/model-route.js';
import { resolveAuxiliaryRoute } from '../model/resolve-auxiliary-route.js';
import type { SecretReader } from '../model/resolve-runtime-provider.js';

/** Starts every handoff summary; the store recognises carriers by their flag, people by this. */
export const COMPACTION_SUMMARY_PREFIX = '[CONTEXT COMPACTION — REFERENCE ONLY]';
/** Each message is cut to this many characters in the text given to the summariser. */
export const SUMMARY_INPUT_MESSAGE_CHARS = 4000;

export const COMPRESSION_SYSTEM_PROMPT = [
  'You write handoff summaries of conversations between a user and an AI agent.',
  'Another instance of the agent will continue the conversation from your summary plus the most recent messages, which it sees verbatim.',
  'Keep: the user’s goals and constraints, decisions made, files and commands touched, facts learned, open questions and unfinished work.',
  'Be specific (names, paths, numbers). Do not invent anything. Write plain text, no preamble.',
].join('\n');

export interface CompressSessionOptions {
  readonly store: SessionStore;
  readonly config: HermesConfig;
  /** Any id of the conversation; its compression tip is compressed. */
  readonly sessionId: string;
  /** The summariser (default: the `auxiliary.compression` route). */
  readonly route?: ModelRoute;
  /** Messages kept verbatim (default `compression.protect_last_n`). */
  readonly protectLastN?: number;
  /** A note for the summariser (`/compress <focus>`). */
  readonly focus?: string;
  readonly secret?: SecretReader;
  readonly home?: string;
  readonly signal?: AbortSignal;
}

export interface CompressionResult {
  readonly parentSessionId: string;
  readonly childSessionId: string;
  readonly summarizedMessages: number;
  readonly retainedMessages: number;
}

function renderForSummary(row: MessageRecord): string {
  let text = row.apiContent ?? row.content ?? '';
  if (row.toolCalls) text += `${text ? '\n' : ''}[tool calls] ${row.toolCalls}`;
  if (text.length > SUMMARY_INPUT_MESSAGE_CHARS)
    text = `${text.slice(0, SUMMARY_INPUT_MESSAGE_CHARS / 2)}\n… [cut] …\n${text.slice(-SUMMARY_INPUT_MESSAGE_CHARS / 2)}`;
  const who = row.role === 'tool' ? `tool ${row.toolName ?? ''}`.trim() : row.role;
  return `### ${who}\n${text}`;
}

/** The index where the verbatim tail starts: never on a tool result (its call stays with it). */
function tailStart(rows: readonly MessageRecord[], keep: number): number {
  let start = Math.max(1, rows.length - keep);
  while (start > 1 && rows[start]?.role === 'tool') start -= 1;
  return start;
}

/**
 * Summarises the middle of a conversation and publishes the result as a compression child:
 * takes the store's compression lease, asks the summariser, then `publishCompressionChild`
 * (handoff summary + retained tail) in one transaction. Nothing is lost on failure: the
 * session stays as it was and the error says why. Exported for `/compress`.
 */
export async function compressSession(options: CompressSessionOptions): Promise<CompressionResult> {
  const { store, config } = options;
  const parentId = store.getCompressionTip(options.sessionId);
  const rows = loadMessages(store, parentId);
  const keep = options.protectLastN ?? config.compression.protectLastN;
  const start = tailStart(rows, keep);
  if (rows.length < 2 || start >= rows.length)
    throw new AgentError({
      code: 'compression_failed',
      message: `session ${parentId} has too few messages to compress`,
    });
  const head = rows.slice(0, start);
  const tail = rows.slice(start);
  const holder = await store.acquireCompressionLease(parentId);
  if (holder === null)
    throw new AgentError({
      code: 'compression_busy',
      message: AGENT_ERROR_MESSAGES.compressionBusy(parentId),
    });
  try {
    const route =
      options.route ??
      resolveAuxiliaryRoute(config, 'compression', {
        ...(options.secret ? { secret: options.secret } : {}),
        home: options.home ?? getHermesHome(),
      });
    const client = createModelClient({
      routes: [route],
      stream: false,
      maxRetries: config.auxiliary.transientRetries,
    });
    const request = [
      'Summarise this conversation for the handoff.',
      options.focus ? `Focus on: ${options.focus}` : '',
      '',
      head.map(renderForSummary).join('\n\n'),
    ]
      .filter((line, index) => line !== '' || index === 2)
      .join('\n');
    const { turn } = await client.complete({
      messages: [
        { role: 'system', content: COMPRESSION_SYSTEM_PROMPT },
        { role: 'user', content: request },
      ],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const summary = turn.content.trim();
    if (summary === '')
      throw new AgentError({
        code: 'compression_failed',
        message: 'the summariser returned an empty summary',
      });
    const childSessionId = await store.publishCompressionChild({
      parentId,
      summary: `${COMPACTION_SUMMARY_PREFIX}\n${summary}`,
      retainedMessages: tail.map(rowToMessageInput),
      leaseHolder: holder,
      // What was stored after the rows read above (while the summary was being made, by a turn
      // of another process, say) is copied into the child, not left behind in the parent.
      watermark: rows.at(-1)?.id ?? 0,
    });
    return {
      parentSessionId: parentId,
      childSessionId,
      summarizedMessages: head.length,
      retainedMessages: tail.length,
    };
  } finally {
    await store.releaseCompressionLease(parentId, holder).catch(() => {});
  }
}
