import { stat } from 'node:fs/promises';
import type { ProfileRuntime } from '@hermes/agent';
import {
  BOT_CHAT_TITLE,
  messageResponse,
  readAllMessages,
  type SessionListItem,
  type SessionRecord,
  type SessionStore,
  SessionStoreError,
} from '@hermes/session-store';
import type { Bridge } from '../bridge.js';
import {
  CLOSE_END_REASON,
  DENIED_TITLE_SOURCES,
  SESSION_LIST_DEFAULT_LIMIT,
} from '../constants.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from '../contract/error-codes.js';
import type { MethodParams, MethodResult } from '../contract/methods.js';
import type { CallContext } from '../rpc/connection.js';
import type { LiveSession } from '../runtime/live-session.js';

type Summary = MethodResult<'session.list'>['sessions'][number];

function storeFailure(error: unknown): RpcError {
  if (RpcError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(RPC_ERROR_CODES.sessionStoreFailure, `session store failed: ${message}`, {
    ...(SessionStoreError.isInstance(error) ? { store_code: error.code } : {}),
  });
}

export function summaryOf(
  bridge: Bridge,
  runtime: ProfileRuntime,
  row: SessionRecord | SessionListItem,
  resolvedId: string,
  extra: { lastActive: number; preview: string | null; unread: boolean },
): Summary {
  const live = bridge.liveSessionFor(runtime, row.lineageRootId ?? row.id);
  return {
    id: row.id,
    resolved_id: resolvedId,
    title: row.title,
    preview: extra.preview,
    source: row.source,
    started_at: row.startedAt,
    last_active: extra.lastActive,
    message_count: row.messageCount,
    ended_at: row.endedAt,
    end_reason: row.endReason,
    archived: row.archived === 1,
    pinned: row.pinned === 1,
    hidden: row.hidden === 1,
    unread: extra.unread,
    live_session_id: live?.id ?? null,
  };
}

async function isDirectory(folder: string): Promise<boolean> {
  try {
    return (await stat(folder)).isDirectory();
  } catch {
    return false;
  }
}

function liveView(session: LiveSession): MethodResult<'session.create'> {
  return {
    session_id: session.id,
    stored_session_id: session.storedSessionId,
    profile: session.runtime.name,
    title: session.title,
    cwd: session.cwd,
  };
}

export function sessionMethods(bridge: Bridge) {
  /** The exact-title lookup: one summary or none; a reaped canonical Bot Chat comes back first. */
  async function listByTitle(
    runtime: ProfileRuntime,
    store: SessionStore,
    title: string,
  ): Promise<Summary[]> {
    let row = store.getSessionByTitle(title, { includeHidden: true });
    if (!row) return [];
    if (row.archived === 1 && title === BOT_CHAT_TITLE) {
      await store.unarchiveRecoverableSession(row.id);
      row = store.getSession(row.id);
      if (!row) return [];
    }
    if (row.archived === 1 || DENIED_TITLE_SOURCES.includes(row.source)) return [];
    const tip = store.getCompressionTip(row.id);
    const tipRow = store.getSession(tip) ?? row;
    const lastActive = tipRow.lastActivityAt ?? tipRow.startedAt;
    return [
      summaryOf(bridge, runtime, row, tip, {
        lastActive,
        preview: store.getSessionPreview(tip),
        unread: row.lastReadAt !== null && lastActive > row.lastReadAt,
      }),
    ];
  }

  const methods = {
    async 'session.create'(params: MethodParams<'session.create'>, context: CallContext) {
      const runtime = bridge.profile(params.profile);
      if (params.cwd !== undefined && !(await isDirectory(params.cwd)))
        throw new RpcError(
          RPC_ERROR_CODES.invalidParams,
          `Invalid params: cwd: not an existing folder: ${params.cwd}`,
        );
      if (bridge.closing)
        throw new RpcError(RPC_ERROR_CODES.sessionBusy, 'the bridge is shutting down');
      let row: SessionRecord;
      try {
        const store = await runtime.store();
        row = await runtime.run(() =>
          store.createSession({
            source: 'tui',
            profileName: runtime.name,
            ...(params.title ? { title: params.title, titleSource: 'user' as const } : {}),
            ...(params.cwd ? { cwd: params.cwd } : {}),
          }),
        );
        const session = bridge.openLive(runtime, store, row);
        session.attach(context.connection);
        return liveView(session);
      } catch (error) {
        if (
          SessionStoreError.isInstance(error) &&
          (error.code === 'title_in_use' || error.code === 'title_too_long')
        )
          throw new RpcError(RPC_ERROR_CODES.invalidParams, error.message);
        throw storeFailure(error);
      }
    },

    async 'session.list'(
      params: MethodParams<'session.list'>,
    ): Promise<MethodResult<'session.list'>> {
      const runtime = bridge.profile(params.profile);
      try {
        const store = await runtime.store();
        if (params.title !== undefined) {
          return { sessions: await listByTitle(runtime, store, params.title), has_more: false };
        }
        const page = store.listSessionsRich({
          limit: params.limit ?? SESSION_LIST_DEFAULT_LIMIT,
          offset: params.offset ?? 0,
          // Hidden sessions belong to Bot Mode: only a desktop surface may ask for them.
          includeHidden: bridge.surface === 'desktop' && params.include_hidden === true,
          ...(params.search ? { searchQuery: params.search } : {}),
        });
        return {
          sessions: page.sessions.map((row) =>
            summaryOf(bridge, runtime, row, row.id, {
              lastActive: row.lastActive,
              preview: row.preview,
              unread: row.unread,
            }),
          ),
          has_more: page.hasMore,
        };
      } catch (error) {
        throw storeFailure(error);
      }
    },

    async 'session.resume'(params: MethodParams<'session.resume'>, context: CallContext) {
      if (bridge.closing)
        throw new RpcError(RPC_ERROR_CODES.sessionBusy, 'the bridge is shutting down');
      let session = bridge.sessions.get(params.session_id);
      if (session?.closed) session = undefined;
      let store: SessionStore;
      if (session) {
        store = await session.runtime.store();
      } else {
        const runtime = bridge.profile(params.profile);
        try {
          store = await runtime.store();
        } catch (error) {
          throw storeFailure(error);
        }
        let row = store.getSession(params.session_id);
        if (!row)
          throw new RpcError(
            RPC_ERROR_CODES.sessionNotFound,
            RPC_ERROR_MESSAGES.sessionNotFound(params.session_id),
          );
        if (row.title === BOT_CHAT_TITLE && row.archived === 1) {
          await store.unarchiveRecoverableSession(row.id);
          row = store.getSession(row.id) ?? row;
        }
        session = bridge.openLive(runtime, store, row);
        const tip = store.getSession(session.storedSessionId);
        // Resuming is a person's explicit wish to continue: a closed conversation opens again.
        if (tip && tip.endedAt !== null && !session.running) await store.reopenSession(tip.id);
      }
      const attached = session;
      const messages = readAllMessages(store, session.storedSessionId).map((row) =>
        messageResponse(row),
      );
      // After the reply, in one synchronous step: the running turn's events so far (marked
      // `replayed`), then live events — nothing can slip in between or arrive twice.
      context.afterReply(() => {
        // A connection already attached has had every event live: replaying would repeat them.
        if (attached.isAttached(context.connection)) return;
        attached.replayTo(context.connection);
        attached.attach(context.connection);
      });
      return {
        ...liveView(session),
        running: session.running !== undefined,
        run_id: session.running?.runId ?? null,
        messages,
      };
    },

    async 'session.close'(params: MethodParams<'session.close'>) {
      const session = bridge.session(params.session_id);
      await bridge.closeSession(session, CLOSE_END_REASON);
      return { closed: true };
    },
  };
  // Opening a session writes to the store and may wait for its lock: a stop that comes meanwhile
  // waits for the open, then ends the session with the others — never one left open behind it.
  return {
    ...methods,
    'session.create': (params: MethodParams<'session.create'>, context: CallContext) =>
      bridge.trackOpen(() => methods['session.create'](params, context)),
    'session.resume': (params: MethodParams<'session.resume'>, context: CallContext) =>
      bridge.trackOpen(() => methods['session.resume'](params, context)),
  };
}
