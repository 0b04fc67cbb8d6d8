import { mkdir, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  BOT_RELAY_DIR,
  BOT_RELAY_ENVELOPE_TTL_SECONDS,
  BOT_RELAY_MAX_ATTEMPTS,
  BOT_RELAY_ROSTER_FRESH_SECONDS,
  BOT_RELAY_STALE_AFTER_SECONDS,
  cleanupBotRelayArtifacts,
  openBotRelay,
} from './bot-relay.js';
import { ERROR_MESSAGES, SessionStoreError } from './errors.js';

function clock(start = Math.floor(Date.now() / 1000)) {
  let now = start;
  return {
    now: () => now,
    advance: (seconds: number) => {
      now += seconds;
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (SessionStoreError.isInstance(error)) return error.code;
    throw error;
  }
}

describe('bot relay', () => {
  it('queues only for bots a fresh roster lists', async () => {
    const root = (await tempHome()).path;
    const time = clock();
    const relay = openBotRelay({ root, now: time.now });
    expect(await codeOf(relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' }))).toBe(
      'not_hosted',
    );
    await relay.syncRoster([{ profile: 'work', name: 'Work bot' }]);
    const envelope = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' });
    expect(envelope.id).toMatch(/^[0-9a-f]{32}$/);
    expect(envelope.expiresAt - envelope.createdAt).toBe(BOT_RELAY_ENVELOPE_TTL_SECONDS);
    expect(await codeOf(relay.enqueue({ toProfile: 'other', from: 'peer', message: 'hi' }))).toBe(
      'not_hosted',
    );
    time.advance(BOT_RELAY_ROSTER_FRESH_SECONDS + 1);
    expect(await codeOf(relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' }))).toBe(
      'not_hosted',
    );
    const mode =
      (await stat(path.join(root, BOT_RELAY_DIR, 'outbox', `${envelope.id}.json`))).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('gives each envelope to exactly one of two racing drainers', async () => {
    const root = (await tempHome()).path;
    const sender = openBotRelay({ root });
    await sender.syncRoster([{ profile: 'work' }]);
    const queued = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        sender.enqueue({ toProfile: 'work', from: 'peer', message: `m${index}` }),
      ),
    );
    const [left, right] = await Promise.all([
      openBotRelay({ root }).drain({ limit: 500 }),
      openBotRelay({ root }).drain({ limit: 500 }),
    ]);
    const claimed = [...left.envelopes, ...right.envelopes].map((envelope) => envelope.id).sort();
    expect(claimed).toEqual(queued.map((envelope) => envelope.id).sort());
    expect(await readdir(path.join(root, BOT_RELAY_DIR, 'outbox'))).toEqual([]);
  });

  it('answers an expired envelope queued_expired on drain instead of handing it out', async () => {
    const root = (await tempHome()).path;
    const time = clock();
    const relay = openBotRelay({ root, now: time.now });
    await relay.syncRoster([{ profile: 'work' }]);
    const old = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'stale' });
    time.advance(BOT_RELAY_ENVELOPE_TTL_SECONDS + 1);
    await relay.syncRoster([{ profile: 'work' }]);
    const fresh = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'fresh' });
    const drained = await relay.drain();
    expect(drained.envelopes.map((envelope) => envelope.id)).toEqual([fresh.id]);
    expect(drained.expired).toEqual([old.id]);
    expect(await relay.takeReply(old.id)).toMatchObject({ id: old.id, status: 'queued_expired' });
    expect(await relay.takeReply(old.id)).toBeUndefined();
  });

  it('records one reply per claimed envelope and refuses unknown, repeated and malformed ids', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    await relay.syncRoster([{ profile: 'work' }]);
    const envelope = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' });
    expect(await codeOf(relay.reply(envelope.id, { status: 'delivered', text: 'x' }))).toBe(
      'unknown_envelope',
    );
    await relay.drain();
    expect((await relay.claimed(envelope.id)).message).toBe('hi');
    const [first, second] = await Promise.allSettled([
      relay.reply(envelope.id, { status: 'delivered', text: 'hello back' }),
      relay.reply(envelope.id, { status: 'delivered', text: 'hello twice' }),
    ]);
    const outcomes = [first, second].map((outcome) =>
      outcome.status === 'fulfilled'
        ? 'ok'
        : SessionStoreError.isInstance(outcome.reason)
          ? outcome.reason.code
          : 'other',
    );
    expect(outcomes.sort()).toEqual(['already_replied', 'ok']);
    expect(await codeOf(relay.claimed(envelope.id))).toBe('unknown_envelope');
    expect(await codeOf(relay.reply(envelope.id, { status: 'delivered' }))).toBe('already_replied');
    expect((await relay.takeReply(envelope.id))?.status).toBe('delivered');
    expect(await codeOf(relay.claimed('../../etc/passwd'))).toBe('invalid_envelope_id');
  });

  it('requeues a failed attempt once, then answers failed', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    await relay.syncRoster([{ profile: 'work' }]);
    const envelope = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' });
    await relay.drain();
    expect(BOT_RELAY_MAX_ATTEMPTS).toBe(2);
    expect(await relay.releaseAfterFailure(envelope.id, 'turn failed')).toBe(true);
    const again = await relay.drain();
    expect(again.envelopes).toEqual([expect.objectContaining({ id: envelope.id, attempts: 1 })]);
    expect(await relay.releaseAfterFailure(envelope.id, 'turn failed again')).toBe(false);
    expect(await relay.takeReply(envelope.id)).toMatchObject({
      status: 'failed',
      error: 'turn failed again',
    });
  });

  it('sweeps relay files older than 6 h on drain and in housekeeping, whatever age housekeeping asks for', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    await relay.syncRoster([{ profile: 'work' }]);
    const old = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'old' });
    const young = await relay.enqueue({ toProfile: 'work', from: 'peer', message: 'young' });
    const outbox = path.join(root, BOT_RELAY_DIR, 'outbox');
    const past = new Date(Date.now() - (BOT_RELAY_STALE_AFTER_SECONDS + 60) * 1000);
    await utimes(path.join(outbox, `${old.id}.json`), past, past);
    // A five-hour-old reply stays: the relay's rule is 6 h even when housekeeping passes 1 h.
    const replies = path.join(root, BOT_RELAY_DIR, 'replies');
    const nearly = new Date(Date.now() - 5 * 60 * 60 * 1000);
    await writeFile(path.join(replies, `${'a'.repeat(32)}.json`), '{}');
    await utimes(path.join(replies, `${'a'.repeat(32)}.json`), nearly, nearly);
    expect(await cleanupBotRelayArtifacts(1, { root })).toBe(1);
    expect((await readdir(outbox)).sort()).toEqual([`${young.id}.json`]);
    expect(await readdir(replies)).toEqual([`${'a'.repeat(32)}.json`]);
    await utimes(path.join(outbox, `${young.id}.json`), past, past);
    const drained = await relay.drain();
    expect(drained.swept).toBe(1);
    expect(drained.envelopes).toEqual([]);
    expect(await cleanupBotRelayArtifacts(24, { root: path.join(root, 'nowhere') })).toBe(0);
  });

  it('says which step failed when the folder cannot be used', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    await mkdir(path.join(root, BOT_RELAY_DIR, 'roster.json'), { recursive: true });
    const rosterError = await relay
      .syncRoster([{ profile: 'work' }])
      .catch((error: unknown) => error);
    expect(SessionStoreError.isInstance(rosterError)).toBe(true);
    expect(rosterError).toMatchObject({
      name: 'SessionStoreError',
      code: 'storage_failed',
      operation: 'roster',
    });
    expect((rosterError as Error).message).toMatch(/^bot relay: cannot write the roster \(EISDIR/);
    const blocked = openBotRelay({ root: path.join(root, 'file-root') });
    await writeFile(path.join(root, 'file-root'), 'not a folder');
    const prepareError = await blocked.drain().catch((error: unknown) => error);
    expect(prepareError).toMatchObject({ code: 'storage_failed', operation: 'prepare' });
  });

  it('refuses with SessionStoreError, the relay code and the exact text the front ends show', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    const refusals: [Promise<unknown>, string, string][] = [
      [
        relay.claimed('nope'),
        'invalid_envelope_id',
        ERROR_MESSAGES.botRelayInvalidEnvelopeId('nope'),
      ],
      [
        relay.syncRoster([{ profile: ' ' }]),
        'invalid_roster',
        ERROR_MESSAGES.botRelayInvalidRoster,
      ],
      [
        relay.enqueue({ toProfile: 'work', from: 'peer', message: 'hi' }),
        'not_hosted',
        'bot relay: no front end hosts the bot of profile work right now',
      ],
      [
        relay.reply('d'.repeat(32), { status: 'delivered' }),
        'unknown_envelope',
        `bot relay: no claimed envelope ${'d'.repeat(32)}`,
      ],
    ];
    for (const [attempt, code, message] of refusals) {
      const error = await attempt.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(SessionStoreError.isInstance(error), code).toBe(true);
      expect(error).toMatchObject({
        name: 'SessionStoreError',
        code,
        message,
        operation: undefined,
      });
    }
  });

  it('sweeps the temp files of writes a killed process left, once stale, and never the roster', async () => {
    const root = (await tempHome()).path;
    const relay = openBotRelay({ root });
    await relay.syncRoster([{ profile: 'work' }]);
    const dir = path.join(root, BOT_RELAY_DIR);
    const past = new Date(Date.now() - (BOT_RELAY_STALE_AFTER_SECONDS + 60) * 1000);
    const leftovers = [
      path.join(dir, '.roster.json.4242.0123456789ab.tmp'),
      path.join(dir, 'replies', `.${'e'.repeat(32)}.json.4242.0123456789ab.tmp`),
      path.join(dir, 'outbox', `.${'f'.repeat(32)}.json.4242.0123456789ab.tmp`),
    ];
    const inProgress = path.join(dir, 'claimed', `.${'f'.repeat(32)}.json.4243.0123456789ab.tmp`);
    for (const file of [...leftovers, inProgress]) await writeFile(file, '{"partial');
    for (const file of [...leftovers, path.join(dir, 'roster.json')])
      await utimes(file, past, past);
    expect(await relay.sweepStale()).toBe(leftovers.length);
    expect(await readdir(dir)).toEqual(expect.arrayContaining(['roster.json']));
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(await readdir(path.join(dir, 'claimed'))).toEqual([path.basename(inProgress)]);
  });
});
