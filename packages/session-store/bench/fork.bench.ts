// Fork of a long transcript: total time and the longest event-loop stall (the write lock is held
// for at most as long). Run: pnpm --filter @hermes/session-store exec tsx --conditions=@hermes/source bench/fork.bench.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forkSession, type MessageInput, openSessionStore } from '../src/index.js';

const MESSAGES = Number(process.env.FORK_MESSAGES ?? 10_000);
const RUNS = Number(process.env.FORK_RUNS ?? 3);
const root = mkdtempSync(path.join(tmpdir(), 'hermes-fork-bench-'));
try {
  const store = await openSessionStore({ path: path.join(root, 'state.db') });
  await store.createSession({ id: 'parent', source: 'cli' });
  for (let start = 0; start < MESSAGES; start += 500) {
    const batch: MessageInput[] = [];
    for (let index = start; index < Math.min(MESSAGES, start + 500); index += 1)
      batch.push({
        role: index % 2 === 0 ? 'user' : 'assistant',
        content: `message ${index} about trains to lyon and the weather in paris, with some more words`,
      });
    await store.appendMessages('parent', batch);
  }
  for (let run = 0; run < RUNS; run += 1) {
    let last = performance.now();
    let longest = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    const started = performance.now();
    const { copied } = await forkSession(store, { sessionId: 'parent', endParent: false });
    const total = performance.now() - started;
    longest = Math.max(longest, performance.now() - last);
    clearInterval(ticker);
    console.log(
      `fork of ${copied} messages: ${total.toFixed(0)} ms total, longest event-loop stall ${longest.toFixed(0)} ms`,
    );
  }
  await store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
