// A chat turn's writes with messages indexed after their commit (this code) against the same code
// with the previous definition restored in its file: 0001_fts.sql's triggers, which index every
// message inside its own write transaction, and the watermark pinned above every id so the catch-up
// never has anything to do. Both stores run in this process, in alternating blocks.
// Run: pnpm --filter @hermes/session-store exec tsx --conditions=@hermes/source bench/fts-catch-up.bench.ts
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { systemClock } from '../src/clock.js';
import { indexPendingBatch, readFtsIndexState } from '../src/fts-watermark.js';
import { openSessionStore, type SessionStore } from '../src/index.js';
import { StoreContext } from '../src/store-context.js';
import { restoreTriggerIndexing } from './trigger-indexing.js';

const WARM_CHATS = Number(process.env.WARM_CHATS ?? 1000);
const BLOCK_CHATS = Number(process.env.BLOCK_CHATS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const PROMPT = 'You are a helpful assistant. '.repeat(40);
const usage = { inputTokens: 12, outputTokens: 3, apiCalls: 1, model: 'm', billingProvider: 'p' };

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}
const micros = (milliseconds: number) => `${(milliseconds * 1000).toFixed(1)} µs`;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

interface Arm {
  readonly label: string;
  readonly store: SessionStore;
  readonly closing: number[];
  readonly opening: number[];
  cpuMicros: number;
  chats: number;
}

/** One chat as `/v1/chat/completions` writes it: a new conversation, its user and assistant rows. */
async function chat(arm: Arm, record: boolean): Promise<void> {
  const id = `api_${randomUUID().slice(0, 12)}`;
  let started = performance.now();
  const began = await arm.store.beginTurn(id, {
    create: { source: 'api_server', profileName: 'default', cwd: '/srv', model: 'm' },
    systemPrompt: PROMPT,
    messages: [{ role: 'user', content: 'hello there, what is the weather in lyon tomorrow' }],
  });
  if (record) arm.opening.push(performance.now() - started);
  started = performance.now();
  await arm.store.endTurn(id, {
    messages: [
      { role: 'assistant', content: 'sunny and warm, as ever in lyon', finishReason: 'stop' },
    ],
    usage,
    releaseLease: began?.holder ?? '',
  });
  if (record) arm.closing.push(performance.now() - started);
}

/**
 * A block of chats, paced like requests (`gapMs` apart, or only an event-loop turn), with the CPU
 * this process spent on it: the catch-ups its timers ran during the block included, and the rows
 * still pending at its end indexed inside it (a search catches up first), so no block pays for
 * another's rows.
 */
async function block(arm: Arm, gapMs: number): Promise<void> {
  const cpu = process.cpuUsage();
  for (let index = 0; index < BLOCK_CHATS; index += 1) {
    await chat(arm, true);
    await (gapMs > 0 ? sleep(gapMs) : nextTurn());
  }
  arm.store.searchMessages('lyon', { limit: 1 });
  const spent = process.cpuUsage(cpu);
  arm.cpuMicros += spent.user + spent.system;
  arm.chats += BLOCK_CHATS;
}

function report(arms: readonly Arm[], title: string): void {
  console.log(title);
  for (const arm of arms) {
    console.log(
      `  ${arm.label.padEnd(26)} endTurn p50 ${micros(percentile(arm.closing, 0.5))} p90 ${micros(percentile(arm.closing, 0.9))}; beginTurn p50 ${micros(percentile(arm.opening, 0.5))}; CPU per chat ${(arm.cpuMicros / arm.chats).toFixed(0)} µs`,
    );
  }
  const [after, before] = arms as [Arm, Arm];
  console.log(
    `  ratio after/before: endTurn p50 ${(percentile(after.closing, 0.5) / percentile(before.closing, 0.5)).toFixed(2)}x, beginTurn p50 ${(percentile(after.opening, 0.5) / percentile(before.opening, 0.5)).toFixed(2)}x, CPU per chat ${(after.cpuMicros / after.chats / (before.cpuMicros / before.chats)).toFixed(2)}x`,
  );
}

/**
 * What the catch-up costs: the state read every commit makes (one statement), and one catch-up
 * transaction by the number of rows it indexes (median of 40), on a file with 20k indexed rows.
 */
async function catchUpCosts(root: string): Promise<void> {
  const databasePath = path.join(root, 'costs.db');
  const store = await openSessionStore({ path: databasePath });
  await store.createSession({ id: 'chat', source: 'cli' });
  for (let index = 0; index < 20_000; index += 500)
    await store.appendMessages(
      'chat',
      Array.from({ length: 500 }, (_, row) => ({
        role: 'user' as const,
        content: `warm row ${index + row} hello there, what is the weather in lyon tomorrow`,
      })),
    );
  await store.close();
  const database = new BetterSqlite3(databasePath);
  database.pragma('synchronous = NORMAL');
  const context = new StoreContext(database, systemClock, { attemptMs: 0, readMs: 1000 });
  const reads: number[] = [];
  for (let index = 0; index < 2000; index += 1) {
    const started = performance.now();
    readFtsIndexState(context);
    reads.push(performance.now() - started);
  }
  const insert = database.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('chat', 'assistant', ?, 1)",
  );
  const catchUp = database.transaction(() => indexPendingBatch(context));
  const line = [`per-commit state read p50 ${micros(percentile(reads, 0.5))}`];
  // The first commits on a new WAL file also grow it; measure once it has its size.
  for (let sample = 0; sample < 100; sample += 1) {
    insert.run('warm-up');
    catchUp.immediate();
  }
  for (const rows of [1, 2, 16, 64, 256]) {
    const timings: number[] = [];
    for (let sample = 0; sample < 40; sample += 1) {
      for (let row = 0; row < rows; row += 1)
        insert.run(`sunny and warm, as ever in lyon ${sample} ${row}`);
      const started = performance.now();
      catchUp.immediate();
      timings.push(performance.now() - started);
    }
    const median = percentile(timings, 0.5);
    line.push(`${rows} rows ${micros(median)} (${micros(median / rows)} a row)`);
  }
  database.close();
  console.log(`catch-up costs: ${line.join('; ')}`);
}

const root = mkdtempSync(path.join(tmpdir(), 'hermes-fts-catch-up-'));
try {
  await catchUpCosts(root);
  const afterPath = path.join(root, 'after.db');
  const beforePath = path.join(root, 'before.db');
  const after = await openSessionStore({ path: afterPath });
  const beforeSetup = await openSessionStore({ path: beforePath });
  await beforeSetup.close();
  restoreTriggerIndexing(beforePath);
  const before = await openSessionStore({ path: beforePath });
  const fresh = (label: string, store: SessionStore): Arm => ({
    label,
    store,
    closing: [],
    opening: [],
    cpuMicros: 0,
    chats: 0,
  });
  const warm = [fresh('after', after), fresh('before', before)];
  for (let index = 0; index < WARM_CHATS; index += 1)
    for (const arm of warm) await chat(arm, false);

  for (const gapMs of [0, 2]) {
    const arms = [fresh('after (catch-up)', after), fresh('before (insert trigger)', before)];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternate which goes first, so neither always follows the other's leftovers.
      const order = round % 2 === 0 ? arms : [...arms].reverse();
      for (const arm of order) await block(arm, gapMs);
    }
    report(
      arms,
      `${ROUNDS} blocks of ${BLOCK_CHATS} chats each, ${gapMs === 0 ? 'back to back (one event-loop turn between chats)' : `${gapMs} ms apart`}:`,
    );
  }
  await after.close();
  await before.close();
  for (const databasePath of [afterPath, beforePath]) {
    const raw = new BetterSqlite3(databasePath);
    raw.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)");
    const counts = raw
      .prepare(
        'SELECT (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM messages_fts_docsize) AS indexed',
      )
      .get() as { messages: number; indexed: number };
    raw.close();
    if (counts.messages !== counts.indexed) throw new Error(`${databasePath}: index incomplete`);
  }
  console.log('both indexes complete and equal to their messages (integrity-check, rank 1)');
} finally {
  rmSync(root, { recursive: true, force: true });
}
