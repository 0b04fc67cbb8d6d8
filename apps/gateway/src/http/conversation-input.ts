import type { NewSessionOptions } from '@hermes/agent';
import {
  type MessageInput,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
} from '@hermes/session-store';
import type { Context } from 'hono';
import * as v from 'valibot';
import { profileApiKey } from '../runtime/profiles.js';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';
import { looseJsonObject } from './body.js';
import { HttpError } from './errors.js';
import type { GatewayEnv } from './gateway-env.js';
import { newApiSessionId, SESSION_ID_PATTERN } from './routes/sessions.js';

export const SESSION_ID_HEADER = 'X-Hermes-Session-Id';
export const SESSION_KEY_HEADER = 'X-Hermes-Session-Key';
export const SESSION_HEADER_MAX_CHARS = 256;
/** Sessions created by the OpenAI-compatible endpoints. */
export const API_SESSION_SOURCE = 'api_server';

/** One OpenAI-format content part (only text parts carry text for the agent). */
const ContentPartSchema = looseJsonObject({ type: v.string(), text: v.optional(v.string()) });
export const MessageContentSchema = v.union([v.string(), v.null(), v.array(ContentPartSchema)]);

type MessageContent = v.InferOutput<typeof MessageContentSchema> | undefined;

function isTextPart(part: v.InferOutput<typeof ContentPartSchema>): boolean {
  return part.type === 'text' || part.type === 'input_text' || part.type === 'output_text';
}

/**
 * The text of a content value: strings as-is, text parts joined, other parts (images, files —
 * never sent to the model) as a `[<type>]` marker, so the model knows something was attached.
 */
export function contentText(content: MessageContent): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isTextPart(part) ? (part.text ?? '') : `[${part.type}]`))
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * Whether a content value holds text that is not blank — what a prompt needs: the markers of
 * `contentText` alone (an image-only message) would send the model nothing but `[image_url]`.
 */
export function hasPromptText(content: MessageContent): boolean {
  if (typeof content === 'string') return content.trim() !== '';
  if (!Array.isArray(content)) return false;
  return content.some((part) => isTextPart(part) && (part.text ?? '').trim() !== '');
}

/** A prior turn of a client-sent conversation, ready to be stored as history. */
export interface HistoryMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string;
  readonly toolCalls?: unknown;
  readonly toolCallId?: string;
}

function readSessionHeader(context: Context, name: string): string | undefined {
  const value = context.req.header(name);
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > SESSION_HEADER_MAX_CHARS || /[\r\n\0]/.test(value)) {
    throw new HttpError({
      status: 400,
      code: 'invalid_session_header',
      message: `${name} must be 1-${SESSION_HEADER_MAX_CHARS} characters without CR, LF or NUL`,
    });
  }
  return value;
}

function historyRows(history: readonly HistoryMessage[]): MessageInput[] {
  return history.map(
    (message): MessageInput => ({
      role: message.role,
      content: message.content,
      ...(message.toolCalls !== undefined ? { toolCalls: message.toolCalls } : {}),
      ...(message.toolCallId !== undefined ? { toolCallId: message.toolCallId } : {}),
    }),
  );
}

/**
 * A request that names no session (neither `X-Hermes-Session-Id` nor `X-Hermes-Session-Key`)
 * starts a new conversation, which its turn creates: one transaction with the client's earlier
 * messages and the new one (the agent's `newSession`; see `runNewConversationTurn`). `undefined`
 * when the request names a session — `resolveApiSession` finds or creates it then.
 */
export function newApiConversation(
  context: Context<GatewayEnv>,
  history: readonly HistoryMessage[],
): NewSessionOptions | undefined {
  if (
    context.req.header(SESSION_ID_HEADER) !== undefined ||
    context.req.header(SESSION_KEY_HEADER) !== undefined
  )
    return undefined;
  return {
    source: API_SESSION_SOURCE,
    profileName: context.get('runtime').name,
    ...(history.length > 0 ? { history: historyRows(history) } : {}),
  };
}

/** Ids drawn for one new conversation before a run of collisions is an error. */
export const NEW_CONVERSATION_ID_DRAWS = 4;

/**
 * Runs the turn that creates a new conversation under a freshly drawn `api_…` id; an id that
 * turns out to be taken (`session_exists`, nothing stored) is drawn again.
 */
export async function runNewConversationTurn(
  runTurn: (request: TurnRequest) => Promise<TurnOutcome>,
  request: Omit<TurnRequest, 'sessionId' | 'newSession'> & { newSession: NewSessionOptions },
  newId: () => string = newApiSessionId,
): Promise<TurnOutcome> {
  for (let draw = 1; ; draw += 1) {
    try {
      return await runTurn({ ...request, sessionId: newId() });
    } catch (error) {
      const taken = error instanceof HttpError && error.code === 'session_exists';
      if (!taken || draw >= NEW_CONVERSATION_ID_DRAWS) throw error;
    }
  }
}

/**
 * The session an OpenAI-compatible request continues: `X-Hermes-Session-Id` names one (created
 * with that id when new), `X-Hermes-Session-Key` finds the peer's latest live session (it needs
 * an API key, since a key is a guessable name), otherwise a new session. A new session is seeded
 * with the client's prior messages; an existing one keeps its stored history.
 */
export async function resolveApiSession(
  context: Context<GatewayEnv>,
  store: SessionStore,
  history: readonly HistoryMessage[],
): Promise<{ session: SessionRecord; created: boolean }> {
  const runtime = context.get('runtime');
  const sessionId = readSessionHeader(context, SESSION_ID_HEADER);
  const sessionKey = readSessionHeader(context, SESSION_KEY_HEADER);
  if (sessionKey !== undefined && !profileApiKey(runtime)) {
    throw new HttpError({
      status: 403,
      code: 'session_key_requires_api_key',
      message: `${SESSION_KEY_HEADER} needs an API key: set API_SERVER_KEY for this profile`,
    });
  }
  if (sessionId !== undefined) {
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      throw new HttpError({
        status: 400,
        code: 'invalid_session_id',
        message: 'Session id must be 1-128 characters from A-Z, a-z, 0-9, ".", "_", ":", "-"',
      });
    }
    const existing = store.getSession(sessionId);
    if (existing) return { session: existing, created: false };
  } else if (sessionKey !== undefined) {
    const existing = store.findLatestGatewaySessionForPeer({
      sessionKey,
      source: API_SESSION_SOURCE,
    });
    if (existing) return { session: existing, created: false };
  }
  let session: SessionRecord;
  try {
    session = await store.createSession({
      // A generated id that is taken is drawn again by the store.
      ...(sessionId !== undefined ? { id: sessionId } : { newId: newApiSessionId }),
      source: API_SESSION_SOURCE,
      profileName: runtime.name,
      ...(sessionKey !== undefined ? { sessionKey } : {}),
    });
  } catch (error) {
    // Two first requests with the same new id: the second continues the session the first made.
    const existing = sessionId !== undefined ? store.getSession(sessionId) : undefined;
    if (SessionStoreError.isInstance(error) && error.code === 'session_exists' && existing)
      return { session: existing, created: false };
    throw error;
  }
  if (history.length > 0) await store.appendMessages(session.id, historyRows(history));
  return { session, created: true };
}
