import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { getDefaultHermesRoot, writeFileAtomic } from '@hermes/config';
import * as v from 'valibot';
import {
  isMissing,
  isTempFileName,
  readJson,
  removeQuietly,
  writeFileExclusive,
} from './bot-relay-files.js';
import { type BotRelayOperation, ERROR_MESSAGES, SessionStoreError } from './errors.js';

export type { BotRelayErrorCode, BotRelayOperation } from './errors.js';

/** The relay's folder under the Hermes root (shared by every profile of the root). */
export const BOT_RELAY_DIR = 'bot_relay';
/** Claimed envelopes, replies and queued envelopes older than this are swept (6 h). */
export const BOT_RELAY_STALE_AFTER_SECONDS = 6 * 60 * 60;
/** How long a queued envelope waits for delivery before it is answered `queued_expired`. */
export const BOT_RELAY_ENVELOPE_TTL_SECONDS = 900;
/** A roster older than this no longer proves that a front end hosts its bots. */
export const BOT_RELAY_ROSTER_FRESH_SECONDS = 600;
/** How long a delivery waits for a busy Bot Chat to become free. */
export const BOT_RELAY_TURN_WAIT_SECONDS = 120;
/** The longest one delivery attempt (the delivered turn) may run. */
export const BOT_RELAY_ATTEMPT_TIMEOUT_SECONDS = 600;
/** Delivery attempts per envelope before it is answered `failed`. */
export const BOT_RELAY_MAX_ATTEMPTS = 2;

const ENVELOPE_ID = /^[0-9a-f]{32}$/;

export interface BotRosterEntry {
  /** The profile whose Bot Chat the front end hosts. */
  readonly profile: string;
  readonly name?: string | undefined;
}

export interface BotRoster {
  readonly bots: readonly BotRosterEntry[];
  /** Epoch seconds of the last sync. */
  readonly syncedAt: number;
}

export interface BotEnvelope {
  /** 32 hex characters. */
  readonly id: string;
  readonly toProfile: string;
  readonly from: string;
  readonly message: string;
  readonly replyTo: string | null;
  /** Epoch seconds (files are shared between processes, so wall-clock time). */
  readonly createdAt: number;
  readonly expiresAt: number;
  /** Delivery attempts made so far. */
  readonly attempts: number;
}

export type BotReplyStatus = 'delivered' | 'no_reply' | 'failed' | 'queued_expired';

export interface BotReply {
  readonly id: string;
  readonly status: BotReplyStatus;
  readonly text: string | null;
  readonly error: string | null;
  readonly repliedAt: number;
}

const RosterSchema = v.object({
  bots: v.array(
    v.object({ profile: v.pipe(v.string(), v.minLength(1)), name: v.optional(v.string()) }),
  ),
  syncedAt: v.number(),
});

const EnvelopeSchema = v.object({
  id: v.pipe(v.string(), v.regex(ENVELOPE_ID)),
  toProfile: v.string(),
  from: v.string(),
  message: v.string(),
  replyTo: v.nullable(v.string()),
  createdAt: v.number(),
  expiresAt: v.number(),
  attempts: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

const ReplySchema = v.object({
  id: v.string(),
  status: v.picklist(['delivered', 'no_reply', 'failed', 'queued_expired']),
  text: v.nullable(v.string()),
  error: v.nullable(v.string()),
  repliedAt: v.number(),
});

export interface BotRelayOptions {
  /** The Hermes root (default `getDefaultHermesRoot()`); the relay lives in `<root>/bot_relay/`. */
  readonly root?: string;
  /** Wall clock in epoch seconds (default `Date.now() / 1000`). */
  readonly now?: () => number;
}

function storageFailure(
  operation: BotRelayOperation,
  what: string,
  error: unknown,
): SessionStoreError {
  const detail = error instanceof Error ? error.message : String(error);
  return new SessionStoreError({
    code: 'storage_failed',
    message: ERROR_MESSAGES.botRelayStorageFailed(what, detail),
    cause: error,
    operation,
  });
}

/**
 * The file-backed bot relay: a front end that hosts bots (Bot Mode) declares them in a roster;
 * senders queue envelopes in `outbox/`; the host claims them (`claimed/`, by an atomic rename, so
 * two drainers never get the same one), delivers each into its profile's Bot Chat and records the
 * reply in `replies/`, which the sender takes. Every file is JSON, mode 0600, written atomically
 * (a temp file renamed or linked into place; a failed write leaves neither a part nor the temp).
 * Stale files (6 h) are swept on every drain and by `cleanupBotRelayArtifacts`.
 */
export class BotRelay {
  readonly dir: string;
  readonly #now: () => number;

  constructor(options: BotRelayOptions = {}) {
    this.dir = path.join(path.resolve(options.root ?? getDefaultHermesRoot()), BOT_RELAY_DIR);
    this.#now = options.now ?? (() => Date.now() / 1000);
  }

  #folder(name: 'outbox' | 'claimed' | 'replies'): string {
    return path.join(this.dir, name);
  }

  #file(folder: 'outbox' | 'claimed' | 'replies', id: string): string {
    if (!ENVELOPE_ID.test(id)) {
      throw new SessionStoreError({
        code: 'invalid_envelope_id',
        message: ERROR_MESSAGES.botRelayInvalidEnvelopeId(id),
      });
    }
    return path.join(this.#folder(folder), `${id}.json`);
  }

  async #ensure(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      for (const folder of ['outbox', 'claimed', 'replies'] as const) {
        await mkdir(this.#folder(folder), { recursive: true, mode: 0o700 });
      }
    } catch (error) {
      throw storageFailure('prepare', 'create its folders', error);
    }
  }

  /** Replaces the roster: the bots this front end hosts now. */
  async syncRoster(bots: readonly BotRosterEntry[]): Promise<BotRoster> {
    for (const bot of bots) {
      if (typeof bot.profile !== 'string' || bot.profile.trim() === '') {
        throw new SessionStoreError({
          code: 'invalid_roster',
          message: ERROR_MESSAGES.botRelayInvalidRoster,
        });
      }
    }
    await this.#ensure();
    const roster: BotRoster = {
      bots: bots.map((bot) => ({
        profile: bot.profile.trim(),
        ...(bot.name !== undefined ? { name: bot.name } : {}),
      })),
      syncedAt: this.#now(),
    };
    try {
      await writeFileAtomic(path.join(this.dir, 'roster.json'), JSON.stringify(roster), {
        mode: 0o600,
      });
    } catch (error) {
      throw storageFailure('roster', 'write the roster', error);
    }
    return roster;
  }

  /** The last roster, or null when none was synced (a damaged file counts as none). */
  async readRoster(): Promise<BotRoster | null> {
    try {
      return (await readJson(path.join(this.dir, 'roster.json'), RosterSchema)) ?? null;
    } catch {
      return null;
    }
  }

  /** True when a roster synced within the freshness window lists `profile`. */
  async isHosted(profile: string): Promise<boolean> {
    const roster = await this.readRoster();
    if (!roster || this.#now() - roster.syncedAt > BOT_RELAY_ROSTER_FRESH_SECONDS) return false;
    return roster.bots.some((bot) => bot.profile === profile);
  }

  /** Queues a message for a hosted bot; refused (`not_hosted`) unless a fresh roster lists it. */
  async enqueue(input: {
    toProfile: string;
    from: string;
    message: string;
    replyTo?: string | null;
    ttlSeconds?: number;
  }): Promise<BotEnvelope> {
    if (!(await this.isHosted(input.toProfile))) {
      throw new SessionStoreError({
        code: 'not_hosted',
        message: ERROR_MESSAGES.botRelayNotHosted(input.toProfile),
      });
    }
    await this.#ensure();
    const now = this.#now();
    const envelope: BotEnvelope = {
      id: randomBytes(16).toString('hex'),
      toProfile: input.toProfile,
      from: input.from,
      message: input.message,
      replyTo: input.replyTo ?? null,
      createdAt: now,
      expiresAt: now + (input.ttlSeconds ?? BOT_RELAY_ENVELOPE_TTL_SECONDS),
      attempts: 0,
    };
    try {
      await writeFileAtomic(this.#file('outbox', envelope.id), JSON.stringify(envelope), {
        mode: 0o600,
      });
    } catch (error) {
      throw storageFailure('queue', 'queue the envelope', error);
    }
    return envelope;
  }

  /**
   * Claims queued envelopes, oldest first (optionally only for `profiles`, at most `limit`). Each
   * claim is a rename into `claimed/`: a concurrent drainer that loses the rename skips it.
   * Expired envelopes are answered `queued_expired` and returned in `expired`. Stale files are
   * swept first.
   */
  async drain(options: { profiles?: readonly string[]; limit?: number } = {}): Promise<{
    envelopes: BotEnvelope[];
    expired: string[];
    swept: number;
  }> {
    await this.#ensure();
    const swept = await this.sweepStale();
    const limit = options.limit ?? 100;
    const wanted = options.profiles ? new Set(options.profiles) : undefined;
    let names: string[];
    try {
      names = (await readdir(this.#folder('outbox'))).filter(
        (name) => ENVELOPE_ID.test(name.replace(/\.json$/, '')) && name.endsWith('.json'),
      );
    } catch (error) {
      throw storageFailure('drain', 'read the outbox', error);
    }
    const queued: BotEnvelope[] = [];
    for (const name of names) {
      try {
        const envelope = await readJson(path.join(this.#folder('outbox'), name), EnvelopeSchema);
        if (envelope && (!wanted || wanted.has(envelope.toProfile))) queued.push(envelope);
      } catch {
        // A damaged envelope is left for the stale sweep; it must not block the others.
      }
    }
    queued.sort(
      (left, right) => left.createdAt - right.createdAt || left.id.localeCompare(right.id),
    );
    const envelopes: BotEnvelope[] = [];
    const expired: string[] = [];
    const now = this.#now();
    for (const envelope of queued) {
      if (envelopes.length >= limit) break;
      try {
        await rename(this.#file('outbox', envelope.id), this.#file('claimed', envelope.id));
      } catch (error) {
        if (isMissing(error)) continue; // another drainer claimed it first
        throw storageFailure('drain', 'claim an envelope', error);
      }
      if (now > envelope.expiresAt) {
        await this.reply(envelope.id, {
          status: 'queued_expired',
          error: 'the envelope expired before a front end delivered it',
        });
        expired.push(envelope.id);
        continue;
      }
      envelopes.push(envelope);
    }
    return { envelopes, expired, swept };
  }

  /** A claimed envelope; `unknown_envelope` when it is not claimed (never queued, replied, swept). */
  async claimed(id: string): Promise<BotEnvelope> {
    const file = this.#file('claimed', id);
    let envelope: BotEnvelope | undefined;
    try {
      envelope = await readJson(file, EnvelopeSchema);
    } catch (error) {
      throw storageFailure('read', 'read the claimed envelope', error);
    }
    if (!envelope) {
      throw new SessionStoreError({
        code: 'unknown_envelope',
        message: ERROR_MESSAGES.botRelayUnknownEnvelope(id),
      });
    }
    return envelope;
  }

  /** True when `envelope` is past its TTL now. */
  isExpired(envelope: BotEnvelope): boolean {
    return this.#now() > envelope.expiresAt;
  }

  /**
   * A failed attempt: back to the outbox for another try, or — after `BOT_RELAY_MAX_ATTEMPTS` —
   * answered `failed`. Returns true when it will be retried.
   */
  async releaseAfterFailure(id: string, error: string): Promise<boolean> {
    const envelope = await this.claimed(id);
    const attempts = envelope.attempts + 1;
    if (attempts >= BOT_RELAY_MAX_ATTEMPTS) {
      await this.reply(id, { status: 'failed', error });
      return false;
    }
    try {
      await writeFileAtomic(this.#file('claimed', id), JSON.stringify({ ...envelope, attempts }), {
        mode: 0o600,
      });
      await rename(this.#file('claimed', id), this.#file('outbox', id));
    } catch (failure) {
      throw storageFailure('requeue', 'requeue the envelope', failure);
    }
    return true;
  }

  /**
   * Records the reply to a claimed envelope (once: a second reply is `already_replied`) and
   * drops the claim. The reply file appears whole or not at all, and only if none is there yet
   * (temp file, then a hard link), so two recorders cannot both win and a failed write leaves
   * nothing behind: the claim stays and the reply can be recorded again.
   */
  async reply(
    id: string,
    input: { status: BotReplyStatus; text?: string | null; error?: string | null },
  ): Promise<BotReply> {
    const claimedFile = this.#file('claimed', id);
    const replyFile = this.#file('replies', id);
    let claimedExists = true;
    try {
      await stat(claimedFile);
    } catch (error) {
      if (!isMissing(error)) throw storageFailure('reply', 'read the claim', error);
      claimedExists = false;
    }
    if (!claimedExists) {
      let replied = false;
      try {
        await stat(replyFile);
        replied = true;
      } catch {
        replied = false;
      }
      throw new SessionStoreError(
        replied
          ? { code: 'already_replied', message: ERROR_MESSAGES.botRelayAlreadyReplied(id) }
          : { code: 'unknown_envelope', message: ERROR_MESSAGES.botRelayUnknownEnvelope(id) },
      );
    }
    const reply: BotReply = {
      id,
      status: input.status,
      text: input.text ?? null,
      error: input.error ?? null,
      repliedAt: this.#now(),
    };
    let recorded: boolean;
    try {
      recorded = await writeFileExclusive(replyFile, JSON.stringify(reply), { mode: 0o600 });
    } catch (error) {
      throw storageFailure('reply', 'write the reply', error);
    }
    if (!recorded) {
      throw new SessionStoreError({
        code: 'already_replied',
        message: ERROR_MESSAGES.botRelayAlreadyReplied(id),
      });
    }
    await removeQuietly(claimedFile);
    return reply;
  }

  /** The sender's side: the reply to `id` once recorded (read and removed), else undefined. */
  async takeReply(id: string): Promise<BotReply | undefined> {
    const file = this.#file('replies', id);
    let reply: BotReply | undefined;
    try {
      reply = await readJson(file, ReplySchema);
    } catch (error) {
      throw storageFailure('read', 'read the reply', error);
    }
    if (reply) await removeQuietly(file);
    return reply;
  }

  /**
   * Removes `*.json` in `outbox/`, `claimed/` and `replies/` older than `maxAgeSeconds` (6 h), and
   * the temp files of writes a killed process never finished (there and beside `roster.json`).
   */
  async sweepStale(maxAgeSeconds = BOT_RELAY_STALE_AFTER_SECONDS): Promise<number> {
    const cutoffMs = (this.#now() - maxAgeSeconds) * 1000;
    let removed = 0;
    const folders = [
      this.dir,
      ...(['outbox', 'claimed', 'replies'] as const).map((name) => this.#folder(name)),
    ];
    for (const folder of folders) {
      let names: string[];
      try {
        names = await readdir(folder);
      } catch {
        continue;
      }
      for (const name of names) {
        const sweepable = isTempFileName(name) || (folder !== this.dir && name.endsWith('.json'));
        if (!sweepable) continue;
        const file = path.join(folder, name);
        try {
          if ((await stat(file)).mtimeMs < cutoffMs && (await removeQuietly(file))) removed += 1;
        } catch {
          // Gone already, or unreadable: nothing to count.
        }
      }
    }
    return removed;
  }
}

/** Opens the relay of a root (nothing is created until something is written). */
export function openBotRelay(options: BotRelayOptions = {}): BotRelay {
  return new BotRelay(options);
}

/**
 * Housekeeping hook with the `cleanup_*_cache` contract: returns the number of files removed.
 * `maxAgeHours` is accepted and ignored — relay artifacts always expire after 6 h, because the
 * plaintext they hold must not outlive the relay's own staleness rule.
 */
export async function cleanupBotRelayArtifacts(
  _maxAgeHours?: number,
  options: BotRelayOptions = {},
): Promise<number> {
  return openBotRelay(options).sweepStale(BOT_RELAY_STALE_AFTER_SECONDS);
}
