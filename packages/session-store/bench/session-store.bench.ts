// Session-store benchmarks. Run: pnpm --filter @hermes/session-store bench
// Prints ratios against a raw better-sqlite3 baseline measured in the same run, and latency
// percentiles for the lookups. Not part of the test suite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  BOT_CHAT_TITLE,
  type MessageInput,
  openSessionStore,
  type SessionStore,
} from '../src/index.js';

const APPEND_ROWS = 100_000;
const APPEND_BATCH = 100;
const SESSIONS = 100_000;
const SEARCH_MESSAGES = 1_000_000;
const SAMPLES = 300;

const root = mkdtempSync(path.join(tmpdir(), 'hermes-bench-'));
const words = Array.from({ length: 5000 }, (_, index) => `w${index.toString(36)}x`);
let seed = 42;
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
}
function sentence(length = 12): string {
  // Zipf-ish: low word indexes are common, high ones rare.
  return Array.from({ length }, () => words[Math.floor(words.length * random() ** 2)]).join(' ');
}
function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}
function format(milliseconds: number): string {
  return `${milliseconds.toFixed(3)} ms`;
}
async function fresh(name: string): Promise<SessionStore> {
  return openSessionStore({
    path: path.join(root, `${name}.db`),
    checkpointIntervalMs: 0,
    recoverFtsOnOpen: false,
  });
}

async function benchAppend(): Promise<void> {
  const rows: MessageInput[] = Array.from({ length: APPEND_ROWS }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: sentence(),
    timestamp: 1_700_000_000 + index,
  }));

  // Baseline: raw prepared inserts of the same rows into the same schema (FTS triggers on), in
  // transactions of the same size, without the store's counters and bookkeeping. Raw and API
  // batches alternate so both see the same machine load and cache state.
  const rawStore = await fresh('append-raw');
  await rawStore.createSession({ id: 'raw', source: 'cli' });
  await rawStore.close();
  const raw = new BetterSqlite3(path.join(root, 'append-raw.db'));
  raw.pragma('synchronous = NORMAL');
  const insert = raw.prepare(
    'INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)',
  );
  const batch = raw.transaction((slice: MessageInput[]) => {
    for (const row of slice) insert.run('raw', row.role, row.content, row.timestamp);
  });
  const store = await fresh('append-api');
  await store.createSession({ id: 'api', source: 'cli' });
  let rawMs = 0;
  let apiMs = 0;
  for (let offset = 0; offset < rows.length; offset += APPEND_BATCH) {
    const slice = rows.slice(offset, offset + APPEND_BATCH);
    let started = performance.now();
    batch.immediate(slice);
    rawMs += performance.now() - started;
    started = performance.now();
    await store.appendMessages('api', slice);
    apiMs += performance.now() - started;
  }

  // One message per transaction: appendMessage against raw single-row autocommit inserts.
  const single = rows.slice(0, 10_000);
  let rawSingleMs = 0;
  let apiSingleMs = 0;
  for (const row of single) {
    let started = performance.now();
    insert.run('raw', row.role, row.content, row.timestamp);
    rawSingleMs += performance.now() - started;
    started = performance.now();
    await store.appendMessage('api', row);
    apiSingleMs += performance.now() - started;
  }
  raw.close();
  await store.close();

  console.log(`(1) append ${APPEND_ROWS} messages, FTS on, batches of ${APPEND_BATCH}:`);
  console.log(
    `    raw better-sqlite3 ${rawMs.toFixed(0)} ms, appendMessages ${apiMs.toFixed(0)} ms, ratio ${(apiMs / rawMs).toFixed(2)}x (target <= 1.5x)`,
  );
  console.log(
    `    one message per transaction (${single.length}): raw ${rawSingleMs.toFixed(0)} ms, appendMessage ${apiSingleMs.toFixed(0)} ms, ratio ${(apiSingleMs / rawSingleMs).toFixed(2)}x`,
  );
}

async function seedSessions(store: SessionStore): Promise<void> {
  await store.withWriteTransaction((database) => {
    const insert = database.prepare(
      `INSERT INTO sessions (id, source, started_at, lineage_root_id, lineage_active_at, title, hidden, archived, pinned, message_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (let index = 0; index < SESSIONS; index += 1) {
      const id = `s${index.toString().padStart(6, '0')}`;
      const started = 1_600_000_000 + index * 60;
      insert.run(
        id,
        index % 10 === 0 ? 'telegram' : 'cli',
        started,
        id,
        started + random() * 3600,
        index === 17 ? BOT_CHAT_TITLE : `Conversation ${index}`,
        index === 17 || index % 50 === 0 ? 1 : 0,
        index % 7 === 0 ? 1 : 0,
        index % 5000 === 0 ? 1 : 0,
        3,
      );
    }
  });
}

async function benchLookups(): Promise<void> {
  const store = await fresh('lookups');
  await seedSessions(store);
  for (let index = 0; index < 20; index += 1) store.listSessionsRich(); // warm the page cache
  const list: number[] = [];
  for (let index = 0; index < SAMPLES; index += 1) {
    const started = performance.now();
    store.listSessionsRich({ offset: index % 2 === 0 ? 0 : Math.floor(random() * 1000) });
    list.push(performance.now() - started);
  }
  const titles: number[] = [];
  for (let index = 0; index < SAMPLES * 10; index += 1) {
    const title = `Conversation ${Math.floor(random() * SESSIONS)}`;
    const started = performance.now();
    store.getSessionByTitle(title, { includeHidden: true });
    titles.push(performance.now() - started);
  }
  await store.close();
  console.log(
    `(2) listSessionsRich over ${SESSIONS} sessions (limit 50, pinned back-fill): p50 ${format(percentile(list, 0.5))}, p99 ${format(percentile(list, 0.99))} (target p50 < 5 ms)`,
  );
  console.log(
    `(3) exact-title lookup over ${SESSIONS} sessions: p50 ${format(percentile(titles, 0.5))}, p99 ${format(percentile(titles, 0.99))} (target p50 < 0.5 ms)`,
  );
}

async function benchSearch(): Promise<void> {
  const store = await fresh('search');
  await store.createSession({ id: 'big', source: 'cli' });
  // Seed with the index detached, then rebuild it the way recovery does (worker thread): far
  // faster than 1M trigger-driven inserts, and it times the rebuild path too.
  await store.withWriteTransaction((database) => {
    database.exec(
      "DROP TRIGGER messages_fts_after_insert; INSERT INTO state_meta(key, value) VALUES ('fts_stale', 'bench seed')",
    );
    const insert = database.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('big', 'user', ?, ?)",
    );
    for (let index = 0; index < SEARCH_MESSAGES; index += 1)
      insert.run(sentence(10), 1_700_000_000 + index);
  });
  const started = performance.now();
  const rebuilt = await store.rebuildFts();
  const seedMs = performance.now() - started;
  if (rebuilt !== 1 || store.isFtsStale()) throw new Error('FTS rebuild did not complete');
  const queries = [...words.slice(0, 50), ...words.slice(500, 550), ...words.slice(3000, 3050)];
  const timings: number[] = [];
  for (let index = 0; index < SAMPLES; index += 1) {
    const query = queries[index % queries.length] ?? 'x';
    const begin = performance.now();
    store.searchMessages(
      index % 3 === 0 ? `${query} ${queries[(index * 7) % queries.length]}` : query,
    );
    timings.push(performance.now() - begin);
  }
  await store.close();
  console.log(
    `(4) FTS search over ${SEARCH_MESSAGES} messages (index rebuilt in a worker in ${(seedMs / 1000).toFixed(1)} s): p50 ${format(percentile(timings, 0.5))}, p99 ${format(percentile(timings, 0.99))} (target p50 < 25 ms)`,
  );
}

try {
  await benchAppend();
  await benchLookups();
  await benchSearch();
} finally {
  rmSync(root, { recursive: true, force: true });
}
