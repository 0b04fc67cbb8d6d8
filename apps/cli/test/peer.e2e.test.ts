import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startModelServer } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { killGatewayAfterTest, parseJson, runCli, testHome, writeModelConfig } from './helpers.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/** A fake peer on loopback: `handle` answers each request; every request is recorded. */
async function fakePeer(handle: (request: Seen, response: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        headers: request.headers,
        body,
      };
      seen.push(entry);
      handle(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

describe('hermes peer', () => {
  it('adds, lists and removes peers; the key goes to .env, never config.yaml', async () => {
    const { env, home } = await testHome();
    const added = await runCli(
      ['peer', 'add', 'Bob', 'http://127.0.0.1:9/', '--key', 'peer-secret-key-1'],
      { env },
    );
    expect(added.code).toBe(0);
    expect(parseJson(await runCli(['peer', 'list', '--json'], { env }))).toEqual({
      peers: [
        { name: 'bob', url: 'http://127.0.0.1:9', key_env: 'HERMES_PEER_BOB_KEY', key_set: true },
      ],
    });
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(path.join(home, 'config.yaml'), 'utf8')).not.toContain(
      'peer-secret-key-1',
    );
    expect(await readFile(path.join(home, '.env'), 'utf8')).toContain(
      'HERMES_PEER_BOB_KEY=peer-secret-key-1',
    );
    expect((await runCli(['peer', 'remove', 'bob'], { env })).code).toBe(0);
    expect(parseJson(await runCli(['peer', 'list', '--json'], { env }))).toEqual({ peers: [] });
    expect(await readFile(path.join(home, '.env'), 'utf8')).not.toContain('HERMES_PEER_BOB_KEY');
  });

  it("removes every key of a peer, its profiles' keys too, and no other peer's", async () => {
    const { env, home } = await testHome();
    const { readFile } = await import('node:fs/promises');
    const envFile = () => readFile(path.join(home, '.env'), 'utf8');
    await runCli(['peer', 'add', 'bob', 'http://127.0.0.1:9', '--key', 'key-of-bob'], { env });
    await runCli(['peer', 'add', 'bobby', 'http://127.0.0.1:8', '--key', 'key-of-bobby'], { env });
    for (const [name, value] of [
      ['HERMES_PEER_BOB__WORK_KEY', 'key-of-bob-work'],
      ['HERMES_PEER_BOB__HOME_LAB_KEY', 'key-of-bob-home-lab'],
      ['HERMES_PEER_BOBBY__WORK_KEY', 'key-of-bobby-work'],
      ['OPENAI_API_KEY', 'sk-unrelated'],
    ]) {
      expect((await runCli(['config', 'set', name as string, value as string], { env })).code).toBe(
        EXIT.ok,
      );
    }
    const removed = await runCli(['peer', 'remove', 'bob', '--json'], { env });
    expect(removed.code).toBe(EXIT.ok);
    const left = await envFile();
    expect(left).not.toContain('HERMES_PEER_BOB_KEY');
    expect(left).not.toContain('HERMES_PEER_BOB__');
    expect(left).not.toContain('key-of-bob-');
    for (const kept of [
      'HERMES_PEER_BOBBY_KEY=key-of-bobby',
      'HERMES_PEER_BOBBY__WORK_KEY=key-of-bobby-work',
      'OPENAI_API_KEY=sk-unrelated',
    ]) {
      expect(left).toContain(kept);
    }
    expect(parseJson(removed)).toEqual({
      peer: 'bob',
      removed: true,
      removed_keys: [
        'HERMES_PEER_BOB_KEY',
        'HERMES_PEER_BOB__HOME_LAB_KEY',
        'HERMES_PEER_BOB__WORK_KEY',
      ],
    });
    await runCli(['peer', 'add', 'carol', 'http://127.0.0.1:7', '--key', 'key-of-carol'], { env });
    const plain = await runCli(['peer', 'remove', 'carol'], { env });
    expect(plain.stdout).toBe('Removed peer carol and HERMES_PEER_CAROL_KEY from .env.\n');
  });

  it("keeps a profile key of a removed peer that an older config's other peer uses as its own", async () => {
    const { env, home } = await testHome();
    const { readFile } = await import('node:fs/promises');
    // Written before names were checked for clashes: HERMES_PEER_A__B_KEY is peer a__b's key.
    await writeFile(
      path.join(home, 'config.yaml'),
      'bot_peers:\n  a:\n    url: http://127.0.0.1:9\n  a__b:\n    url: http://127.0.0.1:8\n',
      { mode: 0o600 },
    );
    await writeFile(
      path.join(home, '.env'),
      'HERMES_PEER_A_KEY=key-of-a\nHERMES_PEER_A__C_KEY=key-of-a-profile-c\nHERMES_PEER_A__B_KEY=key-of-peer-a__b\nHERMES_PEER_A__B__D_KEY=key-of-a__b-profile-d\n',
      { mode: 0o600 },
    );
    const removed = await runCli(['peer', 'remove', 'a'], { env });
    expect(removed.code).toBe(EXIT.ok);
    expect(removed.stderr).toContain("kept HERMES_PEER_A__B_KEY: peer 'a__b' still uses it");
    expect(removed.stderr).toContain("kept HERMES_PEER_A__B__D_KEY: peer 'a__b' still uses it");
    expect(await readFile(path.join(home, '.env'), 'utf8')).toBe(
      'HERMES_PEER_A__B_KEY=key-of-peer-a__b\nHERMES_PEER_A__B__D_KEY=key-of-a__b-profile-d\n',
    );
  });

  it('refuses a peer whose key variable another peer already uses (a-b and a_b, a and a__b)', async () => {
    const { env, home } = await testHome();
    const { readFile } = await import('node:fs/promises');
    const envFile = () => readFile(path.join(home, '.env'), 'utf8');
    expect(
      (
        await runCli(['peer', 'add', 'a-b', 'http://127.0.0.1:9', '--key', 'key-of-a-dash-b'], {
          env,
        })
      ).code,
    ).toBe(EXIT.ok);
    // a_b maps to the same HERMES_PEER_A_B_KEY: refused, and a-b's key is untouched.
    const clash = await runCli(
      ['peer', 'add', 'a_b', 'http://127.0.0.1:9', '--key', 'key-of-a-underscore-b'],
      { env },
    );
    expect(clash.code).toBe(EXIT.failure);
    expect(clash.stderr).toContain("peer 'a-b' already uses HERMES_PEER_A_B_KEY");
    expect(await envFile()).toContain('HERMES_PEER_A_B_KEY=key-of-a-dash-b');
    expect(await envFile()).not.toContain('key-of-a-underscore-b');
    expect(
      parseJson<{ peers: unknown[] }>(await runCli(['peer', 'list', '--json'], { env })).peers,
    ).toHaveLength(1);
    // a__b's key would be the key `peer dm a/b` sends to peer a, and the other way round.
    await runCli(['peer', 'add', 'a', 'http://127.0.0.1:9'], { env });
    const profileClash = await runCli(['peer', 'add', 'a__b', 'http://127.0.0.1:8'], { env });
    expect(profileClash.code).toBe(EXIT.failure);
    expect(profileClash.stderr).toContain("peer 'a' uses HERMES_PEER_A__B_KEY for its profile b");
    await runCli(['peer', 'remove', 'a'], { env });
    expect((await runCli(['peer', 'add', 'x__y', 'http://127.0.0.1:8'], { env })).code).toBe(
      EXIT.ok,
    );
    const reverse = await runCli(['peer', 'add', 'x', 'http://127.0.0.1:9'], { env });
    expect(reverse.code).toBe(EXIT.failure);
    expect(reverse.stderr).toContain("peer 'x__y' already uses HERMES_PEER_X__Y_KEY");
    // Re-adding the same peer (a new URL or key) is not a conflict with itself.
    expect(
      (
        await runCli(['peer', 'add', 'a-b', 'http://127.0.0.1:7', '--key', 'key-of-a-dash-b-2'], {
          env,
        })
      ).code,
    ).toBe(EXIT.ok);
  });

  it('keeps a key variable that another peer of an older config still uses when one is removed', async () => {
    const { env, home } = await testHome();
    const { readFile } = await import('node:fs/promises');
    // Written before names were checked for clashes: both peers read HERMES_PEER_A_B_KEY.
    await writeFile(
      path.join(home, 'config.yaml'),
      'bot_peers:\n  a-b:\n    url: http://127.0.0.1:9\n  a_b:\n    url: http://127.0.0.1:8\n',
      { mode: 0o600 },
    );
    await writeFile(path.join(home, '.env'), 'HERMES_PEER_A_B_KEY=shared-old-key\n', {
      mode: 0o600,
    });
    const removed = await runCli(['peer', 'remove', 'a_b'], { env });
    expect(removed.code).toBe(EXIT.ok);
    expect(await readFile(path.join(home, '.env'), 'utf8')).toContain(
      'HERMES_PEER_A_B_KEY=shared-old-key',
    );
    expect(removed.stderr).toContain("kept HERMES_PEER_A_B_KEY: peer 'a-b' still uses it");
    expect(parseJson(await runCli(['peer', 'list', '--json'], { env }))).toEqual({
      peers: [
        { name: 'a-b', url: 'http://127.0.0.1:9', key_env: 'HERMES_PEER_A_B_KEY', key_set: true },
      ],
    });
  });

  it("never sends another peer's key for a peer/profile target of an older config", async () => {
    const { env, home } = await testHome();
    const peerA = await fakePeer((_request, response) => json(response, 500, {}));
    // Written before names were checked for clashes: a__b's key is also the key of `a/b`.
    await writeFile(
      path.join(home, 'config.yaml'),
      `bot_peers:\n  a:\n    url: ${peerA.url}\n  a__b:\n    url: http://127.0.0.1:9\n`,
      { mode: 0o600 },
    );
    await writeFile(path.join(home, '.env'), 'HERMES_PEER_A__B_KEY=key-of-peer-a__b\n', {
      mode: 0o600,
    });
    const sent = await runCli(['peer', 'dm', 'a/b', 'hi'], { env });
    expect(peerA.seen).toHaveLength(0);
    expect(sent.code).toBe(EXIT.failure);
    expect(sent.stderr).toContain("HERMES_PEER_A__B_KEY is the key of peer 'a__b', not of a/b");
  });

  it('refuses --key with --key-stdin (exit 2) and adds nothing', async () => {
    const { env } = await testHome();
    const both = await runCli(
      ['peer', 'add', 'bob', 'http://127.0.0.1:9', '--key', 'key-one', '--key-stdin'],
      { env, input: 'key-two\n' },
    );
    expect(both.code).toBe(EXIT.usage);
    expect(both.stderr).toContain("option '--key-stdin' cannot be used with option '--key <key>'");
    expect(parseJson(await runCli(['peer', 'list', '--json'], { env }))).toEqual({ peers: [] });
  });

  it('refuses bad names, URLs and targets with exit 2 and unknown peers or missing keys with exit 1', async () => {
    const { env } = await testHome();
    expect((await runCli(['peer', 'add', 'b/ad', 'http://x'], { env })).code).toBe(EXIT.usage);
    expect((await runCli(['peer', 'add', 'bob', 'ftp://x'], { env })).code).toBe(EXIT.usage);
    expect((await runCli(['peer', 'add', 'bob', 'http://user:pw@x'], { env })).code).toBe(
      EXIT.usage,
    );
    expect((await runCli(['peer', 'dm', 'a/b/c', 'hi'], { env })).code).toBe(EXIT.usage);
    const unknown = await runCli(['peer', 'dm', 'carol', 'hi'], { env });
    expect(unknown.code).toBe(EXIT.failure);
    expect(unknown.stderr).toContain("No peer named 'carol'. Run: hermes peer list");
    await runCli(['peer', 'add', 'bob', 'http://127.0.0.1:9'], { env });
    const noKey = await runCli(['peer', 'dm', 'bob', 'hi'], { env });
    expect(noKey.code).toBe(EXIT.failure);
    expect(noKey.stderr).toContain("No API key for peer 'bob'");
  });

  it("messages a real peer gateway's Bot Chat: creates it once, then reuses it", async () => {
    const peer = await testHome();
    killGatewayAfterTest(peer.home);
    const model = await startModelServer({
      script: [{ text: 'hi from bob' }, { text: 'still bob' }],
    });
    await writeModelConfig(peer.home, model.baseUrl);
    await writeFile(path.join(peer.home, '.env'), 'API_SERVER_KEY=peer-api-key-0123456789\n', {
      mode: 0o600,
    });
    const started = parseJson<{ url: string }>(
      await runCli(['gateway', 'start', '--port', '0', '--json'], { env: peer.env }),
    );

    const me = await testHome();
    await runCli(['peer', 'add', 'bob', started.url, '--key', 'peer-api-key-0123456789'], {
      env: me.env,
    });
    const first = await runCli(['peer', 'dm', 'bob', 'hello', 'there'], { env: me.env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('hi from bob\n');
    const second = await runCli(['peer', 'dm', 'bob', 'again', '--json'], { env: me.env });
    expect(parseJson(second)).toMatchObject({ peer: 'bob', created: false, reply: 'still bob' });

    const chats = parseJson<{
      sessions: { title: string; source: string; message_count: number }[];
    }>(await runCli(['sessions', 'list', '--all', '--json'], { env: peer.env }));
    expect(chats.sessions).toEqual([
      expect.objectContaining({ title: 'Bot Chat', source: 'bot_peer_dm', message_count: 4 }),
    ]);

    const wrongKey = await runCli(['peer', 'dm', 'bob', 'hi'], {
      env: { ...me.env, HERMES_PEER_BOB_KEY: 'wrong-key-0000000000' },
    });
    expect(wrongKey.code).toBe(EXIT.failure);
    expect(wrongKey.stderr).toMatch(/Peer 'bob' rejected the request \(HTTP 401\)/);
    // A profile the peer does not serve.
    const noProfile = await runCli(['peer', 'dm', 'bob/work', 'hi'], { env: me.env });
    expect(noProfile.code).toBe(EXIT.failure);
    expect(noProfile.stderr).toContain('(HTTP 404)');
    await runCli(['gateway', 'stop'], { env: peer.env });
  });

  it('looks the chat up by exact title with hidden sessions, and uses the per-profile key', async () => {
    const peer = await fakePeer((request, response) => {
      if (request.method === 'GET') {
        // An older peer ignores the filters and returns a plain list.
        json(response, 200, [
          { id: 's1', title: 'Bot Chat archive' },
          { id: 's2', title: ' Bot Chat ' },
        ]);
      } else json(response, 200, { message: { role: 'assistant', content: 'NO_REPLY' } });
    });
    const { env } = await testHome();
    await runCli(['peer', 'add', 'bob', peer.url, '--key', 'base-key-000000'], { env });
    const dm = await runCli(['peer', 'dm', 'bob/work', 'ping', '--author', 'ada'], {
      env: { ...env, HERMES_PEER_BOB__WORK_KEY: 'work-key-111111' },
    });
    expect(dm).toMatchObject({ code: 0, stdout: '(no reply)\n' });
    const [lookup, chat] = peer.seen;
    const query = new URL(lookup?.url ?? '', 'http://x');
    expect(query.pathname).toBe('/p/work/api/sessions');
    expect(query.searchParams.getAll('title')).toEqual(['Bot Chat']);
    expect(query.searchParams.getAll('include_hidden')).toEqual(['1']);
    expect(chat?.url).toBe('/p/work/api/sessions/s2/chat');
    expect(JSON.parse(chat?.body ?? '{}')).toEqual({ message: 'ping', author: 'ada' });
    expect(chat?.authorization).toBe('Bearer work-key-111111');
    expect(chat?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(chat?.headers['x-hermes-sender-profile']).toBe('default');
    expect(
      peer.seen.some(
        (request) => request.method === 'POST' && request.url.endsWith('/api/sessions'),
      ),
    ).toBe(false);
  });

  it('explains a hidden Bot Chat an older peer cannot list', async () => {
    const peer = await fakePeer((request, response) => {
      if (request.method === 'GET') json(response, 200, { data: [] });
      else
        json(response, 400, {
          detail: "Title 'Bot Chat' is already in use by session 20250101_000000_abcdef",
        });
    });
    const { env } = await testHome();
    await runCli(['peer', 'add', 'bob', peer.url, '--key', 'k-0123456789'], { env });
    const dm = await runCli(['peer', 'dm', 'bob', 'hi'], { env });
    expect(dm.code).toBe(EXIT.failure);
    expect(dm.stderr).toContain("Peer already has a 'Bot Chat' session but it is hidden");
    expect(dm.stderr).toContain("Title 'Bot Chat' is already in use");
    expect(dm.stderr).toContain('PATCH /api/sessions/20250101_000000_abcdef {"hidden": false}');
  });

  it('never sends the bearer across a cross-origin redirect', async () => {
    const other = await fakePeer((request, response) => {
      if (request.method === 'GET')
        json(response, 200, { data: [{ id: 'x1', title: 'Bot Chat' }] });
      else json(response, 200, { message: { content: 'answered elsewhere' } });
    });
    const first = await fakePeer((request, response) => {
      response.writeHead(307, { location: `${other.url}${request.url}` });
      response.end();
    });
    const { env } = await testHome();
    await runCli(['peer', 'add', 'bob', first.url, '--key', 'secret-bearer-999'], { env });
    const dm = await runCli(['peer', 'dm', 'bob', 'hi'], { env });
    expect(dm).toMatchObject({ code: 0, stdout: 'answered elsewhere\n' });
    expect(
      first.seen.every((request) => request.authorization === 'Bearer secret-bearer-999'),
    ).toBe(true);
    expect(other.seen.length).toBeGreaterThan(0);
    expect(other.seen.every((request) => request.authorization === undefined)).toBe(true);
  });

  it('exits 1 for an unreachable peer and 3 when it does not answer in time', async () => {
    const silent = await fakePeer((request, response) => {
      if (request.method === 'GET')
        json(response, 200, { data: [{ id: 'x1', title: 'Bot Chat' }] });
      // The chat request is never answered.
    });
    const { env } = await testHome();
    await runCli(['peer', 'add', 'slow', silent.url, '--key', 'k-0123456789'], { env });
    const timedOut = await runCli(['peer', 'dm', 'slow', 'hi', '--timeout', '1'], { env });
    expect(timedOut.code).toBe(EXIT.timeout);
    expect(timedOut.stderr).toContain("Peer 'slow' did not answer within 1 s");

    const closed = await fakePeer(() => {});
    const port = new URL(closed.url).port;
    await new Promise((resolve) => servers.pop()?.close(resolve));
    await runCli(['peer', 'add', 'gone', `http://127.0.0.1:${port}`, '--key', 'k-0123456789'], {
      env,
    });
    const unreachable = await runCli(['peer', 'dm', 'gone', 'hi'], { env });
    expect(unreachable.code).toBe(EXIT.failure);
    expect(unreachable.stderr).toContain("Could not reach peer 'gone'");
    expect(unreachable.stderr).toContain('ECONNREFUSED');
  });
});
