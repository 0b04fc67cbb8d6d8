import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SpawnedProcess, spawnProcess } from '@hermes/testkit';

const GATEWAY_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Opens the profile's state.db the way a terminal chat does and begins a turn on a session (the
 * agent's own `beginTurn`: the turn lease, the user message, one transaction), then waits without
 * ending it — a turn running in another process. `SIGKILL` leaves the lease behind with a dead
 * holder, as a crashed CLI would.
 */
const HOLDER_SCRIPT = `
import { openSessionStore } from '@hermes/session-store';
const [databasePath, sessionId] = process.argv.slice(1);
const store = await openSessionStore({ path: databasePath });
const began = await store.beginTurn(sessionId, {
  messages: [{ role: 'user', content: 'a question typed in the terminal' }],
});
if (!began) {
  console.log('busy');
  process.exit(1);
}
console.log('holding ' + began.holder);
setInterval(() => {}, 60_000);
`;

export interface TurnHolder {
  readonly process: SpawnedProcess;
  readonly holder: string;
}

export async function holdTurnInAnotherProcess(
  home: string,
  sessionId: string,
): Promise<TurnHolder> {
  const child = await spawnProcess({
    command: process.execPath,
    args: ['--input-type=module', '-e', HOLDER_SCRIPT, path.join(home, 'state.db'), sessionId],
    cwd: GATEWAY_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    readyLine: /^(holding .+|busy)$/m,
  });
  const match = await child.waitForLine(/^holding (.+)$/m);
  return { process: child, holder: match[1] ?? '' };
}

/**
 * A turn that starts in another process while this one is between its own "no turn runs" check
 * and its write: the child takes the profile's write lock (one store write transaction) and
 * prints `locked`, keeps it `holdMs` — any write another process attempts meanwhile waits — and
 * commits a turn lease on `sessionId` in that same transaction (the lease `beginTurn` takes), then
 * prints `holding <holder>` and stays alive until stopped.
 */
const LOCK_THEN_LEASE_SCRIPT = `
import { openSessionStore } from '@hermes/session-store';
const [databasePath, sessionId, holdMs] = process.argv.slice(1);
const store = await openSessionStore({ path: databasePath });
const holder = 'pid=' + process.pid + ' token=raced';
await store.withWriteTransaction((database) => {
  process.stdout.write('locked\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(holdMs));
  const now = Date.now() / 1000;
  database
    .prepare('INSERT INTO session_turn_leases (conversation_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)')
    .run(sessionId, holder, now, now + 300);
});
console.log('holding ' + holder);
setInterval(() => {}, 60_000);
`;

export async function startTurnWhileLocked(
  home: string,
  sessionId: string,
  holdMs: number,
): Promise<SpawnedProcess> {
  return spawnProcess({
    command: process.execPath,
    args: [
      '--input-type=module',
      '-e',
      LOCK_THEN_LEASE_SCRIPT,
      path.join(home, 'state.db'),
      sessionId,
      String(holdMs),
    ],
    cwd: GATEWAY_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    readyLine: /^locked$/m,
  });
}
