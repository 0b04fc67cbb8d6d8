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
