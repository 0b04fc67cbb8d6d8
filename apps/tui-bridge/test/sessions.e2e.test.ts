import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  BOT_CHAT_TITLE,
  LIST_SESSIONS_MAX_LIMIT,
  openBotRelay,
  openSessionStore,
} from '@hermes/session-store';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import {
  BRIDGE_BIN,
  bridgeEnv,
  RpcErrorReply,
  scriptedModel,
  startStdioBridge,
  writeModelConfig,
} from './bridge-client.js';

type Summary = {
  id: string;
  resolved_id: string;
  title: string | null;
  hidden: boolean;
  archived: boolean;
  preview: string | null;
};

describe('session.list and profiles.list', () => {
  it('resurrects a reaped canonical Bot Chat on the title lookup, keeps a deliberate archive archived, and profiles.list is idempotent', async () => {
    const home = await tempHome();
    // Another process (a gateway) wrote these rows into the same state.db.
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    const bot = await store.createSession({
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.appendMessage(bot.id, { role: 'user', content: 'hello bot' });
    await store.endSession(bot.id, 'ws_orphan_reap');
    await store.setArchived(bot.id, true);
    const visible = await store.createSession({ source: 'cli', title: 'Trip planning' });
    await store.appendMessage(visible.id, { role: 'user', content: 'Find trains to Lyon' });
    await store.close();

    const { client } = await startStdioBridge({ home: home.path });
    const plain = await client.request<{ sessions: Summary[] }>('session.list', {});
    expect(plain.sessions.map((row) => row.title)).toEqual(['Trip planning']);
    // A terminal UI does not own hidden sessions: include_hidden is not honoured for it.
    const hiddenAsked = await client.request<{ sessions: Summary[] }>('session.list', {
      include_hidden: true,
    });
    expect(hiddenAsked.sessions.map((row) => row.title)).toEqual(['Trip planning']);

    const byTitle = await client.request<{ sessions: Summary[] }>('session.list', {
      title: BOT_CHAT_TITLE,
    });
    // Found by its title, a chat shows the preview a listing would.
    expect(byTitle.sessions).toEqual([
      expect.objectContaining({
        id: bot.id,
        resolved_id: bot.id,
        hidden: true,
        archived: false,
        preview: 'hello bot',
      }),
    ]);
    expect(plain.sessions[0]?.preview).toBe('Find trains to Lyon');

    const first = await client.request<{
      profiles: {
        name: string;
        canonical_session: { id: string } | null;
        last_session: { id: string } | null;
      }[];
    }>('profiles.list', {});
    const second = await client.request('profiles.list', {});
    expect(second).toEqual(first);
    expect(first.profiles[0]).toMatchObject({ name: 'default', canonical_session: { id: bot.id } });
    expect(first.profiles[0]?.last_session?.id).toBe(visible.id);

    // A person archives the chat on purpose: it stays archived and the lookup finds nothing.
    const again = await openSessionStore({ path: path.join(home.path, 'state.db') });
    await again.setArchived(bot.id, true);
    await again.close();
    expect(
      (await client.request<{ sessions: Summary[] }>('session.list', { title: BOT_CHAT_TITLE }))
        .sessions,
    ).toEqual([]);
    const after = await client.request<{ profiles: { canonical_session: unknown }[] }>(
      'profiles.list',
      {},
    );
    expect(after.profiles[0]?.canonical_session).toBeNull();
  });

  it('lists hidden sessions for a desktop surface and serves other profiles in their own homes', async () => {
    const root = await tempHome();
    await mkdir(path.join(root.path, 'profiles', 'work'), { recursive: true });
    await writeFile(path.join(root.path, 'profiles', 'work', 'avatar.png'), 'png');
    const store = await openSessionStore({ path: path.join(root.path, 'state.db') });
    await store.createSession({ source: 'desktop', title: 'Secret', hidden: true });
    await store.close();
    const { client } = await startStdioBridge({ home: root.path, args: ['--surface', 'desktop'] });
    const hidden = await client.request<{ sessions: Summary[] }>('session.list', {
      include_hidden: true,
    });
    expect(hidden.sessions.map((row) => row.title)).toEqual(['Secret']);
    expect((await client.request<{ sessions: Summary[] }>('session.list', {})).sessions).toEqual(
      [],
    );

    const work = await client.request<{ stored_session_id: string; profile: string }>(
      'session.create',
      {
        profile: 'work',
        title: 'Work thing',
      },
    );
    expect(work.profile).toBe('work');
    const workStore = await openSessionStore({
      path: path.join(root.path, 'profiles', 'work', 'state.db'),
    });
    expect(workStore.getSession(work.stored_session_id)?.title).toBe('Work thing');
    await workStore.close();
    expect(
      (
        await client.request<{ sessions: Summary[] }>('session.list', { profile: 'work' })
      ).sessions.map((row) => row.title),
    ).toEqual(['Work thing']);
    const profiles = await client.request<{
      profiles: { name: string; active: boolean; has_avatar: boolean }[];
    }>('profiles.list', {});
    expect(
      profiles.profiles.map((profile) => [profile.name, profile.active, profile.has_avatar]),
    ).toEqual([
      ['default', true, false],
      ['work', false, true],
    ]);
  });

  it('pages by the store’s page size: a limit past it is -32602, never a silently shorter page', async () => {
    const home = await tempHome();
    const store = await openSessionStore({ path: path.join(home.path, 'state.db') });
    for (let index = 0; index <= LIST_SESSIONS_MAX_LIMIT; index += 1)
      await store.createSession({ source: 'cli', title: `Session ${index}` });
    await store.close();
    const { client } = await startStdioBridge({ home: home.path });
    const refused = await client
      .request('session.list', { limit: LIST_SESSIONS_MAX_LIMIT + 1 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcErrorReply);
    expect((refused as RpcErrorReply).code).toBe(RPC_ERROR_CODES.invalidParams);
    expect((refused as RpcErrorReply).rpcMessage).toContain('limit');
    const first = await client.request<{ sessions: Summary[]; has_more: boolean }>('session.list', {
      limit: LIST_SESSIONS_MAX_LIMIT,
    });
    expect([first.sessions.length, first.has_more]).toEqual([LIST_SESSIONS_MAX_LIMIT, true]);
    const rest = await client.request<{ sessions: Summary[]; has_more: boolean }>('session.list', {
      limit: LIST_SESSIONS_MAX_LIMIT,
      offset: LIST_SESSIONS_MAX_LIMIT,
    });
    expect([rest.sessions.length, rest.has_more]).toEqual([1, false]);
  });
});

describe('the launch profile', () => {
  it('refuses -p with a profile that does not exist, creating nothing, and serves one that does', async () => {
    const root = await tempHome();
    // stdin at its end: a bridge that wrongly starts exits at once instead of waiting.
    const child = spawn(process.execPath, [BRIDGE_BIN, '-p', 'typo'], {
      env: bridgeEnv(root.path),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // As for every `hermes -p`: a profile that does not exist is exit 1 (docs/cli.md).
    expect(code).toBe(1);
    expect(stderr).toContain('profile "typo" does not exist');
    expect(existsSync(path.join(root.path, 'profiles', 'typo'))).toBe(false);

    await mkdir(path.join(root.path, 'profiles', 'work'), { recursive: true });
    const { client } = await startStdioBridge({ home: root.path, args: ['-p', 'work'] });
    expect(client.eventsOf('gateway.ready')[0]?.payload.profile).toBe('work');
  });
});

/** Runs the bin with stdin at its end; resolves with its exit code and what it printed. */
async function runBin(
  home: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BRIDGE_BIN, ...args], {
    env: bridgeEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

describe('the command line', () => {
  it('answers a usage mistake with exit 2 and a one-line hint, not the whole help', async () => {
    const root = await tempHome();
    for (const args of [['--port', 'abc'], ['--bogus'], ['-p', '../etc']]) {
      const result = await runBin(root.path, args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain('Usage:');
    }
    const port = await runBin(root.path, ['--port', 'abc']);
    expect(port.stderr).toContain("option '--port <port>' argument 'abc' is invalid");
    expect(port.stderr).toContain('(run hermes-tui-bridge --help for usage)');
    const help = await runBin(root.path, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: hermes-tui-bridge [options]');
  });
});

describe('session.create with a cwd', () => {
  it('refuses a relative or missing working folder, stores nothing, and runs tools in a real one', async () => {
    const home = await tempHome();
    const work = path.join(home.path, 'project');
    await mkdir(work);
    await writeFile(path.join(home.path, 'a-file'), 'not a folder');
    const server = await scriptedModel([
      { toolCalls: [{ id: 'call_pwd', name: 'terminal', arguments: { command: 'pwd' } }] },
      { text: 'done' },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });

    // The relative one names the real folder from where the bridge runs: refused all the same.
    for (const cwd of [
      path.relative(process.cwd(), work),
      path.join(home.path, 'missing'),
      path.join(home.path, 'a-file'),
    ]) {
      const refused = await client
        .request('session.create', { title: 'Nowhere', cwd })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RpcErrorReply);
      expect((refused as RpcErrorReply).code).toBe(RPC_ERROR_CODES.invalidParams);
      expect((refused as RpcErrorReply).rpcMessage).toContain('cwd');
    }
    expect((await client.request<{ sessions: Summary[] }>('session.list', {})).sessions).toEqual(
      [],
    );

    const created = await client.request<{ session_id: string; cwd: string }>('session.create', {
      cwd: work,
    });
    expect(created.cwd).toBe(work);
    await client.request('prompt.submit', { session_id: created.session_id, text: 'where?' });
    const tool = await client.waitForEvent((event) => event.type === 'tool.complete');
    expect(tool.payload).toMatchObject({ ok: true });
    expect(String(tool.payload.result)).toContain(work);
  });
});

describe('bot relay delivery', () => {
  it('delivers a queued DM into the hidden Bot Chat as a turn and records the reply for the sender', async () => {
    const home = await tempHome();
    const server = await scriptedModel([{ text: 'Hello peer, got it.' }, { text: 'NO_REPLY' }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    const synced = await client.request<{ count: number }>('bot_relay.roster.sync', {
      bots: [{ profile: 'default', name: 'Bot' }],
    });
    expect(synced.count).toBe(1);
    const sender = openBotRelay({ root: home.path });
    const first = await sender.enqueue({
      toProfile: 'default',
      from: 'alice@laptop',
      message: 'ping',
    });
    const second = await sender.enqueue({
      toProfile: 'default',
      from: 'alice@laptop',
      message: 'just fyi',
    });
    const drained = await client.request<{ envelopes: { id: string; message: string }[] }>(
      'bot_relay.outbox.drain',
      {},
    );
    expect(drained.envelopes.map((envelope) => envelope.message)).toEqual(['ping', 'just fyi']);

    const delivered = await client.request<{
      status: string;
      reply: string | null;
      session_id: string;
    }>('bot_relay.deliver', {
      envelope_id: first.id,
    });
    expect(delivered).toMatchObject({ status: 'delivered', reply: 'Hello peer, got it.' });
    expect(await sender.takeReply(first.id)).toMatchObject({
      status: 'delivered',
      text: 'Hello peer, got it.',
    });
    const silent = await client.request<{ status: string; reply: string | null }>(
      'bot_relay.deliver',
      { envelope_id: second.id },
    );
    expect(silent).toEqual(expect.objectContaining({ status: 'no_reply', reply: null }));
    expect(await sender.takeReply(second.id)).toMatchObject({ status: 'no_reply' });

    const chat = await client.request<{ sessions: Summary[] }>('session.list', {
      title: BOT_CHAT_TITLE,
    });
    expect(chat.sessions).toEqual([expect.objectContaining({ hidden: true })]);
    const transcript = await client.request<{ messages: { role: string; content: string }[] }>(
      'session.resume',
      {
        session_id: chat.sessions[0]?.id,
      },
    );
    expect(transcript.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(transcript.messages[0]?.content).toContain('alice@laptop');
    expect(transcript.messages[0]?.content).toContain('ping');
  });

  it('answers a second delivery of an envelope in flight "being delivered", and of an unknown one "unknown"', async () => {
    const home = await tempHome();
    // The model answers late, so the first delivery is still running when the second arrives.
    const server = await scriptedModel([{ text: 'Slow answer.', delayMs: 400 }]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({ home: home.path });
    await client.request('bot_relay.roster.sync', { bots: [{ profile: 'default', name: 'Bot' }] });
    const sender = openBotRelay({ root: home.path });
    const queued = await sender.enqueue({ toProfile: 'default', from: 'alice', message: 'ping' });
    await client.request('bot_relay.outbox.drain', {});

    const settle = (id: string) =>
      client.request<{ status: string }>('bot_relay.deliver', { envelope_id: id }).then(
        (result) => ({ status: result.status }),
        (error: unknown) => ({
          code: (error as RpcErrorReply).code,
          message: (error as RpcErrorReply).rpcMessage,
        }),
      );
    const inFlight = await Promise.all([settle(queued.id), settle(queued.id)]);
    expect(inFlight).toEqual([
      { status: 'delivered' },
      {
        code: RPC_ERROR_CODES.botRelayDeliver,
        message: `bot relay: envelope ${queued.id} is being delivered`,
      },
    ]);

    // Nothing claimed under this id: both answers say so, neither claims a delivery is running.
    const unknown = 'd'.repeat(32);
    const both = await Promise.all([settle(unknown), settle(unknown)]);
    expect(both.map((answer) => 'code' in answer && answer.code)).toEqual([
      RPC_ERROR_CODES.botRelayUnknownEnvelope,
      RPC_ERROR_CODES.botRelayUnknownEnvelope,
    ]);
  });
});

/** Another process holding state.db's write lock until `release()`. */
async function holdWriteLock(database: string): Promise<{ release(): Promise<void> }> {
  // better-sqlite3 as the session store itself resolves it.
  const sessionStoreDir = path.join(import.meta.dirname, '../../../packages/session-store');
  const script = `
    const Database = require(require.resolve('better-sqlite3', { paths: [${JSON.stringify(sessionStoreDir)}] }));
    const db = new Database(${JSON.stringify(database)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', () => reject(new Error('the lock holder exited early')));
  });
  return {
    async release() {
      child.stdin.write('release\n');
      await exited;
    },
  };
}

describe('a session opening when the bridge stops', () => {
  it('is ended with tui_shutdown, not left open, when SIGTERM comes while its write waits for the lock', async () => {
    const home = await tempHome();
    const bridge = await startStdioBridge({ home: home.path });
    // The store exists (and state.db with it) once a session has been opened and closed.
    const warm = await bridge.client.request<{ session_id: string }>('session.create', {});
    await bridge.client.request('session.close', { session_id: warm.session_id });
    const database = path.join(home.path, 'state.db');
    const lock = await holdWriteLock(database);
    const opening = bridge.client
      .request<{ stored_session_id: string }>('session.create', { title: 'late' })
      .catch((error: unknown) => error);
    // Requests are served concurrently in the order written: once a later one is answered, the
    // create has been read and is retrying its write against the lock. The signal comes meanwhile.
    await bridge.client.request('profiles.list', {});
    bridge.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await lock.release();
    expect(await bridge.exited).toBe(0);
    void opening;
    const store = await openSessionStore({ path: database });
    try {
      const late = store.getSessionByTitle('late', { includeHidden: true });
      // The stop waited for the open, then ended it as machinery: never left open.
      expect(late).toBeDefined();
      expect([late?.endedAt !== null, late?.endReason]).toEqual([true, 'tui_shutdown']);
    } finally {
      await store.close();
    }
  });
});
