import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@hermes/config';
import * as v from 'valibot';
import { type InboundMessage, inboundRef } from './inbound.js';

/**
 * `received`: durable, not yet handed to a turn. `started`: a turn for it began (its session and
 * the last message id before the turn are recorded). `stored`: the agent stored it as the turn's
 * user message (`userMessageId`).
 */
export type JournalState = 'received' | 'started' | 'stored';

export interface JournalEntry extends InboundMessage {
  readonly ref: string;
  readonly seq: number;
  readonly state: JournalState;
  readonly sessionId?: string | undefined;
  readonly baselineMessageId?: number | undefined;
  readonly userMessageId?: number | undefined;
}

const entrySchema = v.object({
  ref: v.string(),
  seq: v.number(),
  state: v.picklist(['received', 'started', 'stored']),
  platform: v.string(),
  chatId: v.string(),
  threadId: v.nullable(v.string()),
  messageId: v.string(),
  userId: v.nullable(v.string()),
  userName: v.nullable(v.string()),
  text: v.string(),
  receivedAt: v.number(),
  sessionId: v.optional(v.string()),
  baselineMessageId: v.optional(v.number()),
  userMessageId: v.optional(v.number()),
});

/**
 * A new entry's file: the ref made safe for a file name and cut short, then a digest of the whole
 * ref — so refs that differ only where the replacement or the cut loses it (`a.b` and `a_b`, two
 * long ids) get files of their own, and a ref of any length (a sender's delivery id) fits.
 */
function fileName(ref: string): string {
  const digest = createHash('sha256').update(ref).digest('hex').slice(0, 16);
  return `${ref.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}-${digest}.json`;
}

/**
 * The inbound journal: one small JSON file per platform message that was taken from the platform
 * but whose reply is not yet recorded as a delivery obligation (`<home>/state/inbound/`). Each
 * write is atomic and synced, so after a crash the next start knows exactly which messages were
 * taken, which turns started, and which user messages the agent had already stored.
 */
export class InboundJournal {
  readonly directory: string;
  readonly #entries = new Map<string, JournalEntry>();
  /** Each entry's file (an entry an earlier version wrote keeps the name it has). */
  readonly #files = new Map<string, string>();
  #seq = 0;
  #loaded = false;

  constructor(directory: string) {
    this.directory = directory;
  }

  /** Entries left by earlier runs, oldest first (call once, before recording anything). */
  async load(): Promise<JournalEntry[]> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const found: JournalEntry[] = [];
    for (const name of await readdir(this.directory)) {
      if (!name.endsWith('.json')) continue;
      try {
        const parsed = v.safeParse(
          entrySchema,
          JSON.parse(await readFile(path.join(this.directory, name), 'utf8')),
        );
        if (parsed.success) {
          found.push(parsed.output);
          this.#files.set(parsed.output.ref, name);
        }
      } catch {
        // A half-written temp file never has the .json name; an unreadable entry is skipped.
      }
    }
    found.sort((a, b) => a.receivedAt - b.receivedAt || a.seq - b.seq);
    for (const entry of found) {
      this.#entries.set(entry.ref, entry);
      this.#seq = Math.max(this.#seq, entry.seq);
    }
    this.#loaded = true;
    return found;
  }

  get size(): number {
    return this.#entries.size;
  }

  has(ref: string): boolean {
    return this.#entries.has(ref);
  }

  get(ref: string): JournalEntry | undefined {
    return this.#entries.get(ref);
  }

  /** Records new messages durably; returns those not already in the journal. */
  async record(messages: readonly InboundMessage[]): Promise<JournalEntry[]> {
    if (!this.#loaded) await this.load();
    const fresh: JournalEntry[] = [];
    for (const message of messages) {
      const ref = inboundRef(message);
      if (this.#entries.has(ref)) continue;
      this.#seq += 1;
      const entry: JournalEntry = { ...message, ref, seq: this.#seq, state: 'received' };
      await this.#write(entry);
      fresh.push(entry);
    }
    return fresh;
  }

  async update(ref: string, change: Partial<Omit<JournalEntry, 'ref' | 'seq'>>): Promise<void> {
    const current = this.#entries.get(ref);
    if (!current) return;
    await this.#write({ ...current, ...change });
  }

  async remove(ref: string): Promise<void> {
    const file = this.#files.get(ref) ?? fileName(ref);
    this.#entries.delete(ref);
    this.#files.delete(ref);
    await rm(path.join(this.directory, file), { force: true });
  }

  async #write(entry: JournalEntry): Promise<void> {
    // Set before the write, so a second record of the same message meanwhile is no new one.
    const previous = this.#entries.get(entry.ref);
    this.#entries.set(entry.ref, entry);
    let file = this.#files.get(entry.ref);
    if (file === undefined) {
      file = fileName(entry.ref);
      this.#files.set(entry.ref, file);
    }
    try {
      await writeFileAtomic(path.join(this.directory, file), JSON.stringify(entry));
    } catch (error) {
      // Not durable, so not journaled: the platform's retry of the message must be new again.
      if (previous) this.#entries.set(entry.ref, previous);
      else {
        this.#entries.delete(entry.ref);
        this.#files.delete(entry.ref);
      }
      throw error;
    }
  }
}
