import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BOT_RELAY_DIR, openBotRelay } from '@hermes/session-store';
import { tempHome } from '@hermes/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { RPC_ERROR_CODES } from '../src/contract/error-codes.js';
import {
  type RpcClient,
  RpcErrorReply,
  scriptedModel,
  startStdioBridge,
  writeModelConfig,
} from './bridge-client.js';

/** Every code a request produced in this file; checked against RPC_ERROR_CODES at the end. */
const seen = new Set<number>();

async function expectCode(
  client: RpcClient,
  method: string,
  params: unknown,
  code: number,
): Promise<RpcErrorReply> {
  const error = await client.request(method, params).then(
    (result) => {
      throw new Error(`${method} answered ${JSON.stringify(result)} instead of error ${code}`);
    },
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(RpcErrorReply);
  expect((error as RpcErrorReply).code).toBe(code);
  seen.add(code);
  return error as RpcErrorReply;
}

function codeOfRawReply(line: string | undefined): number | undefined {
  if (!line) return undefined;
  const reply = JSON.parse(line) as { error?: { code: number } };
  if (reply.error) seen.add(reply.error.code);
  return reply.error?.code;
}

describe('JSON-RPC errors', () => {
  it('answers 1,000 malformed lines with -32700 each and then serves a working request', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    const before = client.lines.length;
    const garbage = Array.from(
      { length: 1000 },
      (_, index) => `{"jsonrpc":"2.0","id":${index},"method":"profiles.list"`,
    ).join('\n');
    client.write(garbage);
    await client.waitFor(() => (client.lines.length - before >= 1000 ? true : undefined), 30_000);
    const replies = client.lines
      .slice(before, before + 1000)
      .map((line) => JSON.parse(line) as { id: unknown; error: { code: number } });
    expect(
      replies.every(
        (reply) => reply.id === null && reply.error.code === RPC_ERROR_CODES.parseError,
      ),
    ).toBe(true);
    seen.add(RPC_ERROR_CODES.parseError);
    const listed = await client.request<{
      profiles: { name: string }[];
      bot_mode_protocol: boolean;
    }>('profiles.list', {});
    expect(listed.bot_mode_protocol).toBe(true);
    expect(listed.profiles.map((profile) => profile.name)).toEqual(['default']);
  });

  it('answers invalid requests, unknown methods and bad params, and keeps serving', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    let before = client.lines.length;
    client.write('{"id":7,"method":"profiles.list"}');
    await client.waitFor(() => (client.lines.length > before ? true : undefined));
    expect(codeOfRawReply(client.lines[before])).toBe(RPC_ERROR_CODES.invalidRequest);
    before = client.lines.length;
    client.write(`{"jsonrpc":"2.0","id":8,"method":"profiles.list","params":"x"}`);
    await client.waitFor(() => (client.lines.length > before ? true : undefined));
    expect(codeOfRawReply(client.lines[before])).toBe(RPC_ERROR_CODES.invalidRequest);

    await expectCode(client, 'session.explode', {}, RPC_ERROR_CODES.methodNotFound);
    await expectCode(client, 'event', {}, RPC_ERROR_CODES.methodNotFound);
    const bad = await expectCode(
      client,
      'session.list',
      { limit: 'ten' },
      RPC_ERROR_CODES.invalidParams,
    );
    expect(bad.rpcMessage).toContain('limit');
    // A refused value is quoted in the message, cut short: a 1 MiB value is not echoed back.
    const huge = await expectCode(
      client,
      'approval.respond',
      { session_id: 'x', request_id: 'r', decision: 'z'.repeat(1 << 20) },
      RPC_ERROR_CODES.invalidParams,
    );
    expect(huge.rpcMessage).toMatch(/^Invalid params: decision: Invalid type: Expected .*"zzz+…$/);
    expect(huge.rpcMessage.length).toBeLessThan(300);
    await expectCode(client, 'prompt.submit', { session_id: 'x' }, RPC_ERROR_CODES.invalidParams);
    await expectCode(client, 'session.create', ['positional'], RPC_ERROR_CODES.invalidParams);

    // A notification (no id) is never answered, even when it fails.
    before = client.lines.length;
    client.write('{"jsonrpc":"2.0","method":"session.close","params":{"session_id":"nope"}}');
    // A batch is answered as one array, member by member.
    client.write(
      '[{"jsonrpc":"2.0","id":"a","method":"profiles.list"},{"jsonrpc":"2.0","id":"b","method":"nope"}]',
    );
    await client.waitFor(() => (client.lines.length > before ? true : undefined));
    expect(client.lines.length - before).toBe(1);
    const batch = JSON.parse(client.lines[before] ?? '[]') as {
      id: string;
      result?: unknown;
      error?: { code: number };
    }[];
    expect(batch.map((reply) => [reply.id, reply.error?.code ?? 'ok'])).toEqual([
      ['a', 'ok'],
      ['b', RPC_ERROR_CODES.methodNotFound],
    ]);
    expect(
      (await client.request<{ profiles: unknown[] }>('profiles.list', {})).profiles,
    ).toHaveLength(1);
  });

  it('serves a request whatever its id, as JSON-RPC 2.0 allows: a fraction, or null', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    const before = client.lines.length;
    client.write('{"jsonrpc":"2.0","id":1.5,"method":"profiles.list","params":{}}');
    client.write('{"jsonrpc":"2.0","id":null,"method":"session.list","params":{}}');
    await client.waitFor(() => (client.lines.length - before >= 2 ? true : undefined));
    const replies = client.lines
      .slice(before)
      .map((line) => JSON.parse(line) as { id: unknown; result?: Record<string, unknown> });
    const fraction = replies.find((reply) => reply.id === 1.5);
    const nullId = replies.find((reply) => reply.id === null);
    expect(fraction?.result).toHaveProperty('profiles');
    expect(nullId?.result).toHaveProperty('sessions');
  });

  it('answers the application codes of sessions, slash commands and the agent', async () => {
    const home = await tempHome();
    await mkdir(path.join(home.path, 'skills', 'writing', 'haiku'), { recursive: true });
    await writeFile(
      path.join(home.path, 'skills', 'writing', 'haiku', 'SKILL.md'),
      '# Haiku\nWrite a haiku.\n',
    );
    const { client } = await startStdioBridge({ home: home.path });
    await expectCode(
      client,
      'prompt.submit',
      { session_id: 'tui_missing', text: 'hi' },
      RPC_ERROR_CODES.sessionNotFound,
    );
    await expectCode(
      client,
      'session.resume',
      { session_id: 'no_such_stored_id' },
      RPC_ERROR_CODES.sessionNotFound,
    );
    await expectCode(
      client,
      'session.create',
      { profile: 'ghost' },
      RPC_ERROR_CODES.profileNotFound,
    );
    await expectCode(
      client,
      'session.list',
      { profile: '../etc' },
      RPC_ERROR_CODES.profileNotFound,
    );

    const { session_id } = await client.request<{ session_id: string }>('session.create', {});
    const empty = await expectCode(
      client,
      'slash.exec',
      { session_id, command: '   ' },
      RPC_ERROR_CODES.emptyCommand,
    );
    expect(empty.rpcMessage).toBe('empty command');
    await expectCode(
      client,
      'slash.exec',
      { session_id, command: '/' },
      RPC_ERROR_CODES.emptyCommand,
    );
    const skill = await expectCode(
      client,
      'slash.exec',
      { session_id, command: '/haiku about rain' },
      RPC_ERROR_CODES.useCommandDispatch,
    );
    expect(skill.rpcMessage).toBe('skill command: use command.dispatch for /haiku');
    const dispatched = await client.request<{ type: string; message: string }>('command.dispatch', {
      session_id,
      name: 'haiku',
      arg: 'about rain',
    });
    expect(dispatched).toMatchObject({ type: 'send' });
    expect(dispatched.message).toContain('skill_view(name="haiku")');
    const notDispatchable = await expectCode(
      client,
      'command.dispatch',
      { session_id, name: 'help' },
      RPC_ERROR_CODES.useCommandDispatch,
    );
    expect(notDispatchable.rpcMessage).toBe('not a quick/plugin/bundle/skill command: help');
    const failed = await expectCode(
      client,
      'slash.exec',
      { session_id, command: '/compress' },
      RPC_ERROR_CODES.slashWorkerFailure,
    );
    expect(failed.rpcMessage).toMatch(/^\/compress failed: .*too few messages/);

    // No model configured: the agent refuses before anything is stored, and says what to set.
    const refused = await expectCode(
      client,
      'prompt.submit',
      { session_id, text: 'hello' },
      RPC_ERROR_CODES.agentUnavailable,
    );
    expect(refused.rpcMessage).toContain('model.base_url is not set');
    expect(
      (await client.request<{ messages: unknown[] }>('session.resume', { session_id })).messages,
    ).toEqual([]);
    // …and the session is usable again right away (nothing is left running).
    expect(
      (await client.request<{ output: string }>('slash.exec', { session_id, command: '/status' }))
        .output,
    ).toContain('Idle.');

    await expectCode(
      client,
      'approval.respond',
      { session_id, request_id: 'apr_000000000000', decision: 'once' },
      RPC_ERROR_CODES.approvalNotPending,
    );
    expect(await client.request('subagent.list', { session_id })).toEqual({ subagents: [] });
    await expectCode(
      client,
      'subagent.steer',
      { session_id, subagent_id: 'sa-0-deadbeef', message: 'hello?' },
      RPC_ERROR_CODES.subagentNotFound,
    );
    await expectCode(
      client,
      'subagent.interrupt',
      { session_id, subagent_id: 'sa-0-deadbeef' },
      RPC_ERROR_CODES.subagentNotFound,
    );
    await client.request('session.close', { session_id });
    await expectCode(
      client,
      'slash.exec',
      { session_id, command: '/status' },
      RPC_ERROR_CODES.sessionNotFound,
    );
  });

  it('answers 5006 and 5061 when the store cannot be opened, and keeps serving', async () => {
    const home = await tempHome();
    await mkdir(path.join(home.path, 'state.db')); // a folder where the database should be
    const { client } = await startStdioBridge({ home: home.path });
    const listed = await expectCode(
      client,
      'session.list',
      {},
      RPC_ERROR_CODES.sessionStoreFailure,
    );
    expect(listed.rpcMessage).toMatch(/^session store failed: /);
    await expectCode(client, 'profiles.list', {}, RPC_ERROR_CODES.profilesFailure);
    await expectCode(client, 'session.explode', {}, RPC_ERROR_CODES.methodNotFound);
  });
});

describe('bot relay errors', () => {
  it('answers 4090–4094 for bad, unknown, expired, unhosted and already answered envelopes', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    const relay = openBotRelay({ root: home.path });

    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: '../../etc/passwd' },
      RPC_ERROR_CODES.botRelayInvalid,
    );
    await expectCode(
      client,
      'bot_relay.roster.sync',
      { bots: [{ profile: 'no such profile!' }] },
      RPC_ERROR_CODES.botRelayInvalid,
    );
    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: 'a'.repeat(32) },
      RPC_ERROR_CODES.botRelayUnknownEnvelope,
    );

    // A roster naming a profile this root does not have (another front end wrote it).
    await relay.syncRoster([{ profile: 'default' }, { profile: 'ghost' }]);
    const ghost = await relay.enqueue({ toProfile: 'ghost', from: 'peer', message: 'boo' });
    const short = await relay.enqueue({
      toProfile: 'default',
      from: 'peer',
      message: 'quick',
      ttlSeconds: 3, // long enough to be drained in time on a loaded machine
    });
    const drained = await client.request<{ envelopes: { id: string }[] }>(
      'bot_relay.outbox.drain',
      {},
    );
    expect(drained.envelopes.map((envelope) => envelope.id).sort()).toEqual(
      [ghost.id, short.id].sort(),
    );
    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: ghost.id },
      RPC_ERROR_CODES.botRelayNotHosted,
    );
    // Past its TTL before anyone delivered it.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, (short.expiresAt - Date.now() / 1000) * 1000 + 100)),
    );
    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: short.id },
      RPC_ERROR_CODES.botRelayExpired,
    );
    expect(await relay.takeReply(short.id)).toMatchObject({ status: 'queued_expired' });

    await client.request('bot_relay.reply', {
      envelope_id: ghost.id,
      status: 'failed',
      error: 'no such bot',
    });
    await expectCode(
      client,
      'bot_relay.reply',
      { envelope_id: ghost.id, text: 'again' },
      RPC_ERROR_CODES.botRelayAlreadyReplied,
    );
    expect(await relay.takeReply(ghost.id)).toMatchObject({
      status: 'failed',
      error: 'no such bot',
    });
  });

  it('answers 5090–5094 when the relay files cannot be used', async () => {
    const home = await tempHome();
    const { client } = await startStdioBridge({ home: home.path });
    const relayDir = path.join(home.path, BOT_RELAY_DIR);

    // roster.json is a folder: the roster cannot be written.
    await mkdir(path.join(relayDir, 'roster.json'), { recursive: true });
    await expectCode(
      client,
      'bot_relay.roster.sync',
      { bots: [{ profile: 'default' }] },
      RPC_ERROR_CODES.botRelayRosterWrite,
    );

    // An envelope whose claim slot is taken by a folder cannot be claimed.
    const relay = openBotRelay({ root: home.path });
    await mkdir(path.join(relayDir, 'outbox'), { recursive: true });
    const stuck = 'b'.repeat(32);
    await writeFile(
      path.join(relayDir, 'outbox', `${stuck}.json`),
      JSON.stringify({
        id: stuck,
        toProfile: 'default',
        from: 'p',
        message: 'm',
        replyTo: null,
        createdAt: Date.now() / 1000,
        expiresAt: Date.now() / 1000 + 900,
        attempts: 0,
      }),
    );
    await mkdir(path.join(relayDir, 'claimed', `${stuck}.json`), { recursive: true });
    await expectCode(client, 'bot_relay.outbox.drain', {}, RPC_ERROR_CODES.botRelayDrain);
    // …and the unreadable claim makes delivery fail before any turn.
    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: stuck },
      RPC_ERROR_CODES.botRelayDeliver,
    );

    // replies/ is a file: a reply cannot be written.
    const replied = 'c'.repeat(32);
    await writeFile(path.join(relayDir, 'claimed', `${replied}.json`), '{}');
    await rm(path.join(relayDir, 'replies'), { recursive: true, force: true });
    await writeFile(path.join(relayDir, 'replies'), 'not a folder');
    await expectCode(
      client,
      'bot_relay.reply',
      { envelope_id: replied, text: 'hi' },
      RPC_ERROR_CODES.botRelayReplyWrite,
    );

    // The relay folder itself is a file: nothing can be prepared.
    const other = await tempHome();
    await writeFile(path.join(other.path, BOT_RELAY_DIR), 'not a folder');
    const second = await startStdioBridge({ home: other.path });
    await expectCode(second.client, 'bot_relay.outbox.drain', {}, RPC_ERROR_CODES.botRelayStorage);
    expect(await relay.readRoster()).toBeNull();
  });

  it('answers 5096 when the delivered turn fails and 5095 when the Bot Chat stays busy; two attempts, then failed', async () => {
    const home = await tempHome();
    const server = await scriptedModel([
      { error: { status: 400, message: 'bad request from the scripted provider' } },
      { text: 'b'.repeat(300), chunkSize: 2, chunkDelayMs: 20 },
    ]);
    await writeModelConfig(home.path, server.baseUrl);
    const { client } = await startStdioBridge({
      home: home.path,
      args: ['--relay-turn-wait', '0.3'],
    });
    const relay = openBotRelay({ root: home.path });
    await client.request('bot_relay.roster.sync', { bots: [{ profile: 'default' }] });
    const envelope = await relay.enqueue({
      toProfile: 'default',
      from: 'peer',
      message: 'are you there?',
    });
    await client.request('bot_relay.outbox.drain', {});

    // Attempt 1: the turn fails (the provider refuses); the envelope goes back to the outbox.
    const failed = await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: envelope.id },
      RPC_ERROR_CODES.botRelayTurnFailed,
    );
    expect(failed.rpcMessage).toContain('bad request from the scripted provider');
    const again = await client.request<{ envelopes: { id: string; attempts: number }[] }>(
      'bot_relay.outbox.drain',
      {},
    );
    expect(again.envelopes).toEqual([expect.objectContaining({ id: envelope.id, attempts: 1 })]);

    // The first delivery created the hidden canonical Bot Chat; keep it busy with a long turn.
    const chat = await client.request<{ sessions: { id: string; hidden: boolean }[] }>(
      'session.list',
      { title: 'Bot Chat' },
    );
    expect(chat.sessions).toEqual([expect.objectContaining({ hidden: true })]);
    const live = await client.request<{ session_id: string }>('session.resume', {
      session_id: chat.sessions[0]?.id,
    });
    await client.request('prompt.submit', { session_id: live.session_id, text: 'write a lot' });
    await expectCode(
      client,
      'prompt.submit',
      { session_id: live.session_id, text: 'and more' },
      RPC_ERROR_CODES.sessionBusy,
    );

    // Attempt 2: the chat stays busy past the turn wait; that was the last attempt.
    await expectCode(
      client,
      'bot_relay.deliver',
      { envelope_id: envelope.id },
      RPC_ERROR_CODES.botRelayTurnTimeout,
    );
    expect(await relay.takeReply(envelope.id)).toMatchObject({
      status: 'failed',
      error: 'the Bot Chat stayed busy',
    });
    await client.waitForEvent(
      (event) => event.type === 'run.completed' && event.session_id === live.session_id,
    );
  });
});

afterAll(() => {
  // Every code the bridge defines is produced by a real request above, except two that the bin
  // cannot produce: -32603 (a bug) and 4042 (the bin always has the delegation rail; an embedding
  // program without one gets it — src/methods/review-binding.test.ts).
  const untestable = new Set<number>([
    RPC_ERROR_CODES.internalError,
    RPC_ERROR_CODES.delegationUnavailable,
  ]);
  const missing = Object.entries(RPC_ERROR_CODES).filter(
    ([, code]) => !untestable.has(code) && !seen.has(code),
  );
  expect(missing).toEqual([]);
});
