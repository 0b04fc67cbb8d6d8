import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type StartedGateway, startGateway } from './gateway-process.js';

interface SessionBody {
  id: string;
  title: string | null;
  hidden: boolean;
  pinned: boolean;
  archived: boolean;
  ended_at: number | null;
  end_reason: string | null;
  parent_session_id: string | null;
  has_model_config: boolean;
  message_count: number;
  preview: string | null;
}
interface ListBody {
  data: SessionBody[];
  limit: number;
  offset: number;
  has_more: boolean;
}

async function create(gateway: StartedGateway, json: Record<string, unknown>) {
  return gateway.json<{ session: SessionBody; error?: { code: string; message: string } }>(
    '/api/sessions',
    { method: 'POST', json },
  );
}

async function openStore(gateway: StartedGateway) {
  const store = await openSessionStore({ path: path.join(gateway.home, 'state.db') });
  onTestFinished(() => store.close());
  return store;
}

describe('sessions API', () => {
  it('lists with limit 50 by default, at most 200, offset paging, and refuses a non-integer limit', async () => {
    const gateway = await startGateway();
    for (let index = 0; index < 55; index += 1) await create(gateway, { title: `chat ${index}` });
    const first = await gateway.json<ListBody>('/api/sessions');
    expect(first.body.data).toHaveLength(50);
    expect(first.body).toMatchObject({ limit: 50, offset: 0, has_more: true });
    const second = await gateway.json<ListBody>('/api/sessions?offset=50');
    expect(second.body.data).toHaveLength(5);
    expect(second.body.has_more).toBe(false);
    const ids = new Set([...first.body.data, ...second.body.data].map((session) => session.id));
    expect(ids.size).toBe(55);
    expect((await gateway.json<ListBody>('/api/sessions?limit=1000')).body.limit).toBe(200);
    // The reference: an unparsable offset is the default.
    expect((await gateway.json<ListBody>('/api/sessions?offset=abc')).body.offset).toBe(0);
    const bad = await gateway.json('/api/sessions?limit=ten');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_request', param: 'limit' } });
    expect((await gateway.json('/api/sessions?include_hidden=maybe&title=x')).status).toBe(400);
  });

  it('filters by exact title and honours include_hidden only together with a title', async () => {
    const gateway = await startGateway();
    await create(gateway, { title: 'Trip' });
    await create(gateway, { title: 'Trip planning' });
    const hidden = await create(gateway, { title: 'Secret plans', hidden: true });
    const exact = await gateway.json<ListBody>('/api/sessions?title=Trip');
    expect(exact.body.data.map((session) => session.title)).toEqual(['Trip']);
    const blanket = await gateway.json<ListBody>('/api/sessions?include_hidden=1');
    expect(blanket.body.data.map((session) => session.title).sort()).toEqual([
      'Trip',
      'Trip planning',
    ]);
    const withoutFlag = await gateway.json<ListBody>('/api/sessions?title=Secret%20plans');
    expect(withoutFlag.body.data).toEqual([]);
    const found = await gateway.json<ListBody>(
      '/api/sessions?title=Secret%20plans&include_hidden=yes',
    );
    expect(found.body.data.map((session) => session.id)).toEqual([hidden.body.session.id]);
  });

  it('creates sessions: 201, 409 for an existing id, 400 for a bad id, 400 invalid_title for a taken title with nothing created', async () => {
    const gateway = await startGateway();
    const made = await create(gateway, { id: 'my-chat', title: 'Taken' });
    expect(made.status).toBe(201);
    expect(made.body.session).toMatchObject({ id: 'my-chat', title: 'Taken', hidden: false });
    const again = await create(gateway, { id: 'my-chat' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'session_exists',
      message: 'Session already exists: my-chat',
    });
    const badId = await create(gateway, { id: '../etc' });
    expect(badId.status).toBe(400);
    expect(badId.body.error?.code).toBe('invalid_session_id');
    const duplicate = await create(gateway, { title: 'Taken' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error).toMatchObject({
      code: 'invalid_title',
      message: 'Title already in use by session my-chat',
    });
    const wrongType = await create(gateway, { title: 42 });
    expect(wrongType.status).toBe(400);
    const list = await gateway.json<ListBody>('/api/sessions');
    expect(list.body.data.map((session) => session.id)).toEqual(['my-chat']);
  });

  it('patches fields with the reference errors, applies nothing when the title is refused, and lets pin win over hidden', async () => {
    const gateway = await startGateway();
    await create(gateway, { title: 'Other' });
    const { session } = (await create(gateway, { title: 'Mine' })).body;
    const patch = (json: unknown) =>
      gateway.json<{ session: SessionBody; error?: { code: string; message: string } }>(
        `/api/sessions/${session.id}`,
        { method: 'PATCH', json },
      );
    const unknown = await patch({ colour: 'red', pinned: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: 'unsupported_session_field',
      message: 'Unsupported session fields: colour',
    });
    const notBoolean = await patch({ pinned: 'yes' });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.error).toMatchObject({
      code: 'invalid_session_field',
      message: "'pinned' must be a boolean",
    });
    const taken = await patch({ title: 'Other', pinned: true });
    expect(taken.status).toBe(400);
    expect(taken.body.error?.code).toBe('invalid_title');
    let current = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}`);
    expect(current.body.session).toMatchObject({ title: 'Mine', pinned: false });

    const both = await patch({ hidden: true, pinned: true });
    expect(both.status).toBe(200);
    expect(both.body.session).toMatchObject({ pinned: true, hidden: false });
    const renamed = await patch({ title: 'Renamed', unread: true, end_reason: 'agent_close' });
    expect(renamed.body.session).toMatchObject({ title: 'Renamed', end_reason: 'agent_close' });
    current = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}`);
    expect(current.body.session.title).toBe('Renamed');
    expect(
      (await gateway.json(`/api/sessions/${session.id}`, { method: 'PATCH', body: '{oops' }))
        .status,
    ).toBe(400);
    expect(
      (await gateway.json(`/api/sessions/${session.id}`, { method: 'PATCH', json: [1] })).status,
    ).toBe(400);
    expect(
      (await gateway.json('/api/sessions/nope', { method: 'PATCH', json: { pinned: true } }))
        .status,
    ).toBe(404);
  });

  it('asks for confirm_cascade before archiving a compressed lineage', async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, { title: 'Long chat' })).body;
    const store = await openStore(gateway);
    await store.appendMessage(session.id, { role: 'user', content: 'hello' });
    const child = await store.publishCompressionChild({ parentId: session.id, summary: 'summary' });
    const refused = await gateway.json<{
      error: { code: string; affected_sessions: { id: string }[] };
    }>(`/api/sessions/${child}`, { method: 'PATCH', json: { archived: true } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('archive_cascade_requires_confirmation');
    expect(refused.body.error.affected_sessions.map((row) => row.id).sort()).toEqual(
      [child, session.id].sort(),
    );
    expect(store.getSession(child)?.archived).toBe(0);
    const confirmed = await gateway.json<{ session: SessionBody }>(`/api/sessions/${child}`, {
      method: 'PATCH',
      json: { archived: true, confirm_cascade: true },
    });
    expect(confirmed.body.session.archived).toBe(true);
    expect(store.getSession(session.id)?.archived).toBe(1);
  });

  it('asks for confirm_cascade before deleting a compressed conversation, then deletes every session of it with its messages', async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, { title: 'Long chat' })).body;
    const other = (await create(gateway, { title: 'Another chat' })).body.session;
    const store = await openStore(gateway);
    await store.appendMessage(session.id, { role: 'user', content: 'hello' });
    const child = await store.publishCompressionChild({ parentId: session.id, summary: 'summary' });
    await store.appendMessage(child, { role: 'user', content: 'and later' });
    const lineage = [session.id, child].sort();

    const refused = await gateway.json<{
      error: { code: string; affected_sessions: { id: string }[] };
    }>(`/api/sessions/${child}`, { method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('delete_cascade_requires_confirmation');
    expect(refused.body.error.affected_sessions.map((row) => row.id).sort()).toEqual(lineage);
    expect(store.getSession(session.id)).toBeDefined();
    expect(store.getSession(child)).toBeDefined();
    expect(
      (await gateway.json(`/api/sessions/${child}?confirm_cascade=maybe`, { method: 'DELETE' }))
        .status,
    ).toBe(400);

    const confirmed = await gateway.json<{ deleted: boolean; deleted_sessions: string[] }>(
      `/api/sessions/${child}?confirm_cascade=true`,
      { method: 'DELETE' },
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.deleted).toBe(true);
    expect([...confirmed.body.deleted_sessions].sort()).toEqual(lineage);
    for (const id of lineage) expect((await gateway.json(`/api/sessions/${id}`)).status).toBe(404);
    const listed = await gateway.json<ListBody>('/api/sessions');
    expect(listed.body.data.map((row) => row.id)).toEqual([other.id]);
    const raw = new Database(path.join(gateway.home, 'state.db'), { readonly: true });
    onTestFinished(() => {
      raw.close();
    });
    expect(raw.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(0);
  });

  it('resurrects a reaped Bot Chat on a title lookup but leaves a deliberate archive alone', async () => {
    const gateway = await startGateway();
    const bot = (await create(gateway, { title: 'Bot Chat', hidden: true })).body.session;
    await gateway.json(`/api/sessions/${bot.id}`, {
      method: 'PATCH',
      json: { end_reason: 'ws_orphan_reap', archived: true },
    });
    const lookup = await gateway.json<ListBody>('/api/sessions?title=Bot%20Chat&include_hidden=1');
    expect(lookup.body.data.map((session) => session.id)).toEqual([bot.id]);
    expect(lookup.body.data[0]).toMatchObject({
      archived: false,
      ended_at: null,
      end_reason: null,
      hidden: true,
    });

    // A person archived it on purpose: it stays archived, and the name is free for a new chat.
    await gateway.json(`/api/sessions/${bot.id}`, { method: 'PATCH', json: { archived: true } });
    const none = await gateway.json<ListBody>('/api/sessions?title=Bot%20Chat&include_hidden=1');
    expect(none.body.data).toEqual([]);
    const store = await openStore(gateway);
    expect(store.getSession(bot.id)?.archived).toBe(1);
  });

  it('keeps serving while a Bot Chat resurrection waits for another process holding the write lock', async () => {
    const gateway = await startGateway();
    const bot = (await create(gateway, { title: 'Bot Chat', hidden: true })).body.session;
    await gateway.json(`/api/sessions/${bot.id}`, {
      method: 'PATCH',
      json: { end_reason: 'agent_close', archived: true },
    });
    const holder = new Database(path.join(gateway.home, 'state.db'));
    onTestFinished(() => {
      holder.close();
    });
    holder.exec('BEGIN IMMEDIATE');
    const lookup = gateway.json<ListBody>('/api/sessions?title=Bot%20Chat&include_hidden=1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    const health = await gateway.json('/health/detailed');
    const elapsed = performance.now() - started;
    expect(health.status).toBe(200);
    expect(elapsed).toBeLessThan(1000);
    holder.exec('COMMIT');
    const result = await lookup;
    expect(result.body.data.map((session) => session.id)).toEqual([bot.id]);
  });

  it('lets a peer find-or-create its hidden Bot Chat and chat without making duplicates', async () => {
    const gateway = await startGateway();
    const lookup = () =>
      gateway.json<ListBody>('/api/sessions?limit=200&title=Bot+Chat&include_hidden=1');
    expect((await lookup()).body.data).toEqual([]);
    const made = await create(gateway, { title: 'Bot Chat', source: 'bot_peer_dm', hidden: true });
    expect(made.status).toBe(201);
    const again = await lookup();
    expect(again.body.data.map((session) => session.id)).toEqual([made.body.session.id]);
    // A second create (a peer that missed the lookup) is refused instead of duplicated.
    const duplicate = await create(gateway, { title: 'Bot Chat', source: 'bot_peer_dm' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.error?.message).toContain('Title already in use');
    const chat = await gateway.json<{ message: { content: string } }>(
      `/api/sessions/${made.body.session.id}/chat`,
      { method: 'POST', json: { message: '/status' } },
    );
    expect(chat.status).toBe(200);
    expect(chat.body.message.content).toContain(made.body.session.id);
    expect((await lookup()).body.data).toHaveLength(1);
  });

  it('pages messages oldest or latest, resolves the compression tip, and projects hidden rows', async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, {})).body;
    const store = await openStore(gateway);
    for (let index = 0; index < 7; index += 1)
      await store.appendMessage(session.id, {
        role: index % 2 ? 'assistant' : 'user',
        content: `m${index}`,
      });
    await store.appendMessage(session.id, {
      role: 'user',
      content: 'secret note',
      displayKind: 'hidden',
    });
    type Messages = {
      session_id: string;
      data: { content: string; display_kind: string | null }[];
      has_more: boolean;
    };
    const oldest = await gateway.json<Messages>(`/api/sessions/${session.id}/messages?limit=3`);
    expect(oldest.body.data.map((message) => message.content)).toEqual(['m0', 'm1', 'm2']);
    expect(oldest.body.has_more).toBe(true);
    const latest = await gateway.json<Messages>(
      `/api/sessions/${session.id}/messages?limit=3&order=latest`,
    );
    expect(latest.body.data.map((message) => message.content)).toEqual(['m5', 'm6', '']);
    expect(latest.body.data[2]?.display_kind).toBe('hidden');
    const child = await store.publishCompressionChild({
      parentId: session.id,
      summary: 'summary of m0..m6',
      retainedMessages: [{ role: 'user', content: 'kept' }],
    });
    const viaRoot = await gateway.json<Messages>(`/api/sessions/${session.id}/messages`);
    expect(viaRoot.body.session_id).toBe(child);
    expect(viaRoot.body.data.map((message) => message.content)).toContain('kept');
    expect((await gateway.json(`/api/sessions/${session.id}/messages?order=sideways`)).status).toBe(
      400,
    );
    expect((await gateway.json(`/api/sessions/${session.id}/messages?limit=x`)).status).toBe(400);
    expect((await gateway.json('/api/sessions/unknown/messages')).status).toBe(404);
  });

  it("answers a session's own GET, PATCH and fork with the preview its listing shows", async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, {})).body;
    expect(session.preview).toBeNull();
    const store = await openStore(gateway);
    const first = await store.appendMessage(session.id, {
      role: 'user',
      content: `  What   does\nthis ${'long '.repeat(20)}`,
    });
    await store.appendMessage(session.id, { role: 'assistant', content: 'An answer.' });
    const listed = (await gateway.json<ListBody>('/api/sessions')).body.data[0]?.preview;
    expect(listed).toBe(`What does this ${'long '.repeat(9)}...`);
    const got = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}`);
    expect(got.body.session.preview).toBe(listed);
    const patched = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}`, {
      method: 'PATCH',
      json: { title: 'Named' },
    });
    expect(patched.body.session).toMatchObject({ title: 'Named', preview: listed });
    const fork = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}/fork`, {
      method: 'POST',
      json: { message_id: first },
    });
    expect(fork.body.session.preview).toBe(listed);
  });

  it('forks: the child first with the transcript, then the parent ended branched', async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, { title: 'Original' })).body;
    const store = await openStore(gateway);
    const ids: number[] = [];
    for (const content of ['a', 'b', 'c'])
      ids.push(await store.appendMessage(session.id, { role: 'user', content }));
    const fork = await gateway.json<{
      session: SessionBody;
      forked_from: string;
      copied_messages: number;
    }>(`/api/sessions/${session.id}/fork`, {
      method: 'POST',
      json: { title: 'Branch', message_id: ids[1] },
    });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({ forked_from: session.id, copied_messages: 2 });
    expect(fork.body.session).toMatchObject({
      title: 'Branch',
      parent_session_id: session.id,
      has_model_config: true,
    });
    const messages = await gateway.json<{ data: { content: string }[] }>(
      `/api/sessions/${fork.body.session.id}/messages`,
    );
    expect(messages.body.data.map((message) => message.content)).toEqual(['a', 'b']);
    const parent = await gateway.json<{ session: SessionBody }>(`/api/sessions/${session.id}`);
    expect(parent.body.session.end_reason).toBe('branched');
    const missing = await gateway.json(`/api/sessions/${session.id}/fork`, {
      method: 'POST',
      json: { message_id: 999999 },
    });
    expect(missing.status).toBe(404);
    expect(
      (await gateway.json('/api/sessions/nope/fork', { method: 'POST', json: {} })).status,
    ).toBe(404);
    expect(
      (await gateway.json(`/api/sessions/${session.id}/fork`, { method: 'POST', body: '{' }))
        .status,
    ).toBe(400);
    expect(
      (
        await gateway.json(`/api/sessions/${session.id}/fork`, {
          method: 'POST',
          json: { message_id: 'x' },
        })
      ).status,
    ).toBe(400);
  });

  it('deletes a session once: deleted, then 404', async () => {
    const gateway = await startGateway();
    const { session } = (await create(gateway, {})).body;
    const deleted = await gateway.json(`/api/sessions/${session.id}`, { method: 'DELETE' });
    expect(deleted.body).toEqual({
      object: 'hermes.session.deleted',
      id: session.id,
      deleted: true,
      deleted_sessions: [session.id],
    });
    expect((await gateway.json(`/api/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(
      404,
    );
    expect((await gateway.json(`/api/sessions/${session.id}`)).status).toBe(404);
  });
});
