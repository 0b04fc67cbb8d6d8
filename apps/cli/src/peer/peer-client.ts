import { randomUUID } from 'node:crypto';

/**
 * The `hermes peer dm` client (reference: session-store §6.2). It finds the peer profile's hidden
 * `Bot Chat` (creating it when missing) and sends one message there. Plain `fetch`, redirects
 * followed by hand so the bearer never crosses to another origin.
 */

export const BOT_CHAT_TITLE = 'Bot Chat';
export const PEER_DM_SOURCE = 'bot_peer_dm';
/** Per-request deadlines (seconds): the DM itself, creating the chat, listing. */
export const PEER_TIMEOUTS_S = { dm: 600, accept: 30, list: 30 } as const;
/** Replies that mean "nothing to say": `NO_REPLY` prints `(no reply)`, `[SILENT]` prints nothing. */
export const SILENCE_MARKERS = { noReply: 'NO_REPLY', silent: '[SILENT]' } as const;
const MAX_REDIRECTS = 5;

export type PeerErrorKind = 'unreachable' | 'rejected' | 'timeout' | 'protocol' | 'hidden_bot_chat';

export class PeerError extends Error {
  readonly kind: PeerErrorKind;
  readonly status: number | undefined;

  constructor(kind: PeerErrorKind, message: string, status?: number) {
    super(message);
    this.name = 'PeerError';
    this.kind = kind;
    this.status = status;
  }
}

export interface PeerTarget {
  /** The registered name (used in messages). */
  readonly name: string;
  /** The peer's base URL, already including `/p/<profile>` for a named profile. */
  readonly baseUrl: string;
  readonly key: string;
}

export interface PeerRequestOptions {
  readonly fetch?: typeof fetch;
  /** Seconds per request kind (defaults `PEER_TIMEOUTS_S`). */
  readonly timeoutsS?: Partial<Record<keyof typeof PEER_TIMEOUTS_S, number>>;
}

/** Parses `<peer>[/<profile>]`. Returns undefined for anything else. */
export function parsePeerTarget(
  text: string,
): { peer: string; profile: string | undefined } | undefined {
  const match = /^([^/\s]+)(?:\/([^/\s]+))?$/.exec(text.trim());
  if (!match?.[1]) return undefined;
  return { peer: match[1].toLowerCase(), profile: match[2]?.toLowerCase() };
}

/** `<base>/p/<profile>` for a named profile, the base itself for none or `default`. */
export function peerBaseUrl(url: string, profile: string | undefined): string {
  const base = url.replace(/\/+$/, '');
  return profile && profile !== 'default' ? `${base}/p/${encodeURIComponent(profile)}` : base;
}

function detailOf(body: unknown, fallback: string): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const error = record.error;
    if (typeof error === 'string') return error;
    if (
      error &&
      typeof error === 'object' &&
      typeof (error as { message?: unknown }).message === 'string'
    ) {
      return (error as { message: string }).message;
    }
    if (typeof record.detail === 'string') return record.detail;
    if (typeof record.message === 'string') return record.message;
  }
  return fallback;
}

interface PeerResponse {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

/**
 * One request with a deadline, following redirects itself: the `Authorization` header goes only
 * to the origin it was meant for, never across a cross-origin hop.
 */
async function request(
  target: PeerTarget,
  init: { method: 'GET' | 'POST'; path: string; json?: unknown; headers?: Record<string, string> },
  timeoutS: number,
  options: PeerRequestOptions,
): Promise<PeerResponse> {
  const doFetch = options.fetch ?? fetch;
  const origin = new URL(target.baseUrl).origin;
  let url = new URL(`${target.baseUrl}${init.path}`);
  let method: 'GET' | 'POST' = init.method;
  let body: string | undefined = init.json === undefined ? undefined : JSON.stringify(init.json);
  const signal = AbortSignal.timeout(Math.max(1, Math.round(timeoutS * 1000)));
  try {
    for (let hop = 0; ; hop += 1) {
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(init.headers ?? {}),
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (url.origin === origin) headers.authorization = `Bearer ${target.key}`;
      const response = await doFetch(url, {
        method,
        headers,
        body: body ?? null,
        redirect: 'manual',
        signal,
      });
      const location = response.headers.get('location');
      if ([301, 302, 303, 307, 308].includes(response.status) && location) {
        await response.body?.cancel().catch(() => {});
        if (hop >= MAX_REDIRECTS) {
          throw new PeerError(
            'protocol',
            `Peer '${target.name}' redirected more than ${MAX_REDIRECTS} times`,
          );
        }
        url = new URL(location, url);
        if (
          response.status === 303 ||
          ((response.status === 301 || response.status === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed, text };
    }
  } catch (error) {
    if (error instanceof PeerError) throw error;
    if (signal.aborted) {
      throw new PeerError(
        'timeout',
        `Peer '${target.name}' did not answer within ${timeoutS} s (${init.method} ${init.path.split('?')[0]})`,
      );
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new PeerError(
      'unreachable',
      `Could not reach peer '${target.name}' at ${target.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
}

function rejected(target: PeerTarget, response: PeerResponse): PeerError {
  const detail = detailOf(response.body, response.text.slice(0, 300) || 'no details');
  return new PeerError(
    'rejected',
    `Peer '${target.name}' rejected the request (HTTP ${response.status}): ${detail}`,
    response.status,
  );
}

function sessionsOf(body: unknown): Record<string, unknown>[] {
  const list = Array.isArray(body)
    ? body
    : body && typeof body === 'object'
      ? ((body as { data?: unknown; sessions?: unknown }).data ??
        (body as { sessions?: unknown }).sessions)
      : undefined;
  return Array.isArray(list)
    ? list.filter((item): item is Record<string, unknown> => !!item && typeof item === 'object')
    : [];
}

function idOf(session: Record<string, unknown> | undefined): string | undefined {
  const id = session?.id ?? session?.session_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function timeout(options: PeerRequestOptions, kind: keyof typeof PEER_TIMEOUTS_S): number {
  return options.timeoutsS?.[kind] ?? PEER_TIMEOUTS_S[kind];
}

/**
 * The peer's `Bot Chat`: asked for by title with hidden rows included, then filtered here by exact
 * title, because an older peer ignores both parameters and returns a plain listing.
 */
export async function findBotChat(
  target: PeerTarget,
  options: PeerRequestOptions = {},
): Promise<string | undefined> {
  const response = await request(
    target,
    { method: 'GET', path: '/api/sessions?limit=200&title=Bot+Chat&include_hidden=1' },
    timeout(options, 'list'),
    options,
  );
  if (response.status !== 200) throw rejected(target, response);
  const match = sessionsOf(response.body).find(
    (session) => typeof session.title === 'string' && session.title.trim() === BOT_CHAT_TITLE,
  );
  return idOf(match);
}

/** Creates the peer's `Bot Chat`. */
export async function createBotChat(
  target: PeerTarget,
  options: PeerRequestOptions = {},
): Promise<string> {
  const response = await request(
    target,
    {
      method: 'POST',
      path: '/api/sessions',
      json: { title: BOT_CHAT_TITLE, source: PEER_DM_SOURCE },
    },
    timeout(options, 'accept'),
    options,
  );
  if (response.status === 200 || response.status === 201) {
    const body = response.body as { session?: Record<string, unknown> } & Record<string, unknown>;
    const id = idOf(body?.session) ?? idOf(body);
    if (!id)
      throw new PeerError('protocol', 'Peer did not return a session id for the new Bot Chat');
    return id;
  }
  const detail = detailOf(response.body, response.text.slice(0, 300));
  if ((response.status === 400 || response.status === 409) && /title/i.test(detail)) {
    // The title is taken, yet the listing did not show it: a hidden Bot Chat on a peer too old
    // to list hidden sessions.
    const id = /session\s+([A-Za-z0-9._:-]+)/.exec(detail)?.[1] ?? '<id>';
    throw new PeerError(
      'hidden_bot_chat',
      `Peer already has a 'Bot Chat' session but it is hidden and the peer's gateway is too old to expose hidden sessions to this lookup (HTTP ${response.status}: ${detail}). Update the peer's hermes-agent, or unhide the session there: PATCH /api/sessions/${id} {"hidden": false}.`,
      response.status,
    );
  }
  throw rejected(target, response);
}

export interface PeerDmInput extends PeerRequestOptions {
  readonly target: PeerTarget;
  readonly message: string;
  readonly author?: string | undefined;
  /** Our own profile, sent as `X-Hermes-Sender-Profile`. */
  readonly senderProfile: string;
}

export interface PeerDmResult {
  readonly sessionId: string;
  readonly created: boolean;
  /** The reply as the peer sent it. */
  readonly reply: string;
  /** `no_reply` / `silent` when the reply is a silence marker. */
  readonly silence: 'no_reply' | 'silent' | null;
}

/** Finds or creates the peer's Bot Chat, sends `message`, and returns the reply. */
export async function sendPeerDm(input: PeerDmInput): Promise<PeerDmResult> {
  const { target } = input;
  let sessionId = await findBotChat(target, input);
  let created = false;
  if (!sessionId) {
    sessionId = await createBotChat(target, input);
    created = true;
  }
  const dmTimeout = timeout(input, 'dm');
  const response = await request(
    target,
    {
      method: 'POST',
      path: `/api/sessions/${encodeURIComponent(sessionId)}/chat`,
      json: { message: input.message, ...(input.author ? { author: input.author } : {}) },
      headers: {
        'idempotency-key': randomUUID(),
        'x-hermes-sender-profile': input.senderProfile,
        'x-hermes-wait-seconds': String(Math.round(dmTimeout)),
      },
    },
    dmTimeout,
    input,
  );
  if (response.status !== 200) throw rejected(target, response);
  const body = response.body as
    | { message?: { content?: unknown }; reply?: unknown; content?: unknown }
    | undefined;
  const content = body?.message?.content ?? body?.reply ?? body?.content;
  const reply = typeof content === 'string' ? content : '';
  const trimmed = reply.trim();
  const silence =
    trimmed === SILENCE_MARKERS.noReply
      ? 'no_reply'
      : trimmed === SILENCE_MARKERS.silent
        ? 'silent'
        : null;
  return { sessionId, created, reply, silence };
}
