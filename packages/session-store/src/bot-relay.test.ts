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
  BotRelayError,
  cleanupBotRelayArtifacts,
  openBotRelay,
} from './bot-relay.js';

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
    if (BotRelayError.isInstance(error)) return error.code;
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
        : BotRelayError.isInstance(outcome.reason)
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
    expect(rosterError).toMatchObject({ code: 'storage_failed', operation: 'roster' });
    const blocked = openBotRelay({ root: path.join(root, 'file-root') });
    await writeFile(path.join(root, 'file-root'), 'not a folder');
    const prepareError = await blocked.drain().catch((error: unknown) => error);
    expect(prepareError).toMatchObject({ code: 'storage_failed', operation: 'prepare' });
  });
});
