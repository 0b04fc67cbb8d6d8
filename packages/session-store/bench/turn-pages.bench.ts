// Pages a gateway chat turn writes to the WAL (each page is one WAL frame: a checksum and two
// pwrites on the request's critical path), per transaction, with the b-tree each page belongs to.
// A new conversation the way `/v1/chat/completions` opens one (the agent's `newSession`), first
// on a fresh database, then on one that already holds earlier conversations with the same prompt.
// Run: pnpm --filter @hermes/session-store exec tsx --conditions=@hermes/source bench/turn-pages.bench.ts
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSessionStore, type SessionStore } from '../src/index.js';
import { nameBtrees, walFramesOf } from '../test/wal-frames.js';

const EARLIER_CONVERSATIONS = Number(process.env.EARLIER_CONVERSATIONS ?? 1000);
const PROMPT = 'You are a helpful assistant. '.repeat(40);
const usage = { inputTokens: 12, outputTokens: 3, apiCalls: 1, model: 'm', billingProvider: 'p' };

function conversationId(): string {
  return `api_${Math.floor(Date.now() / 1000)}_${randomUUID().slice(0, 8)}`;
}

function summary(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => (count === 1 ? name : `${name} ×${count}`)).join(', ');
}

/** One new conversation's turn: the opening and closing transactions' pages. */
async function newConversationTurn(store: SessionStore, id: string) {
  let holder = '';
  const opening = await walFramesOf(store.path, async () => {
    const began = await store.beginTurn(id, {
      create: { source: 'api_server', profileName: 'default', cwd: '/srv', model: 'm' },
      systemPrompt: PROMPT,
      messages: [{ role: 'user', content: 'hello there, what is the weather in lyon' }],
    });
    holder = began?.holder ?? '';
  });
  const closing = await walFramesOf(store.path, () =>
    store.endTurn(id, {
      messages: [{ role: 'assistant', content: 'sunny, as ever', finishReason: 'stop' }],
      usage,
      releaseLease: holder,
    }),
  );
  return { opening, closing };
}

function print(label: string, store: SessionStore, pages: readonly number[]): void {
  console.log(`${label}: ${pages.length} pages — ${summary(nameBtrees(store.path, pages))}`);
}

const MEASURED = 50;

/** Mean pages per transaction over several conversations, and the b-trees they fell on. */
function printMean(label: string, store: SessionStore, samples: readonly (readonly number[])[]) {
  const counts = new Map<string, number>();
  for (const pages of samples)
    for (const name of nameBtrees(store.path, pages)) counts.set(name, (counts.get(name) ?? 0) + 1);
  const total = samples.reduce((sum, pages) => sum + pages.length, 0) / samples.length;
  const perBtree = [...counts]
    .sort((left, right) => right[1] - left[1])
    .map(([name, count]) => `${name} ${(count / samples.length).toFixed(2)}`)
    .join(', ');
  console.log(`${label}: ${total.toFixed(2)} pages (mean of ${samples.length}) — ${perBtree}`);
}

const root = mkdtempSync(path.join(tmpdir(), 'hermes-turn-pages-'));
try {
  const store = await openSessionStore({ path: path.join(root, 'state.db') });
  const first = await newConversationTurn(store, conversationId());
  print('fresh database, beginTurn(create)', store, first.opening);
  print('fresh database, endTurn', store, first.closing);
  for (let index = 1; index < EARLIER_CONVERSATIONS; index += 1)
    await newConversationTurn(store, conversationId());
  const later = [];
  for (let index = 0; index < MEASURED; index += 1)
    later.push(await newConversationTurn(store, conversationId()));
  const label = `after ${EARLIER_CONVERSATIONS} conversations`;
  printMean(
    `${label}, beginTurn(create)`,
    store,
    later.map((turn) => turn.opening),
  );
  printMean(
    `${label}, endTurn`,
    store,
    later.map((turn) => turn.closing),
  );
  await store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
