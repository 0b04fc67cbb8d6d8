// A process that runs this package's file operations on command and can be stopped at chosen
// file-system calls, so a test can interleave two processes at exactly the step where a check
// and the removal that follows it could be split (see test-race-agent.ts).
//
// HERMES_RACE_PAUSES is a JSON list of pauses: `{ label, calls, arg, path, prefix?, after?, fifo? }`.
// The first call of one of `calls` (fs function names: `rm`, `unlink`, `rename`, `link`,
// `rmSync`, …) whose argument number `arg` is `path` (or, with `prefix`, anything inside the
// folder `path`) — once the pause `after` has stopped, if given — stops before it runs and prints `{"event":"paused","label":…}`; it goes on when the
// test sends `{"op":"resume","label":…}` (asynchronous calls) or writes to the FIFO `fifo`
// (synchronous calls, which cannot wait for a message: an exit hook). A rename or link onto a
// `*.takeover` path that fails prints `{"event":"token-busy"}`: this process is waiting for a
// takeover token another holds. Commands arrive as JSON lines on stdin; results go to stdout.
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createInterface } from 'node:readline';

interface Pause {
  readonly label: string;
  readonly calls: readonly string[];
  readonly arg: number;
  readonly path: string;
  readonly prefix?: boolean;
  readonly after?: string;
  readonly fifo?: string;
}

const require = createRequire(import.meta.url);
const fs = require('node:fs') as typeof import('node:fs');
const fsPromises = require('node:fs/promises') as Record<string, unknown>;
const fsSync = fs as unknown as Record<string, unknown>;

function emit(event: Record<string, unknown>): void {
  // Synchronous, so a pause inside an exit hook is reported before the process blocks.
  fs.writeSync(1, `${JSON.stringify(event)}\n`);
}

const pauses: Pause[] = JSON.parse(process.env.HERMES_RACE_PAUSES ?? '[]');
const resumers = new Map<string, () => void>();
const resumed = new Set<string>();
const fired = new Set<string>();

function pauseFor(call: string, args: readonly unknown[]): Pause | undefined {
  const index = pauses.findIndex((pause) => {
    if (!pause.calls.includes(call)) return false;
    if (pause.after !== undefined && !fired.has(pause.after)) return false;
    const value = args[pause.arg];
    if (typeof value !== 'string') return false;
    return value === pause.path || (pause.prefix === true && value.startsWith(`${pause.path}/`));
  });
  // Each pause stops one call only.
  const pause = index === -1 ? undefined : pauses.splice(index, 1)[0];
  if (pause !== undefined) fired.add(pause.label);
  return pause;
}

function isTokenPlacement(call: string, args: readonly unknown[]): boolean {
  return (
    (call === 'rename' || call === 'link') &&
    typeof args[1] === 'string' &&
    args[1].endsWith('.takeover')
  );
}

for (const call of ['rm', 'unlink', 'rename', 'link', 'rmdir']) {
  const real = fsPromises[call] as (...args: unknown[]) => Promise<unknown>;
  fsPromises[call] = async (...args: unknown[]) => {
    const pause = pauseFor(call, args);
    if (pause !== undefined) {
      emit({ event: 'paused', label: pause.label });
      await new Promise<void>((resolve) => {
        if (resumed.has(pause.label)) resolve();
        else resumers.set(pause.label, resolve);
      });
    }
    try {
      return await real(...args);
    } catch (error) {
      if (isTokenPlacement(call, args)) emit({ event: 'token-busy' });
      throw error;
    }
  };
}

for (const call of ['rmSync', 'unlinkSync', 'renameSync']) {
  const real = fsSync[call] as (...args: unknown[]) => unknown;
  fsSync[call] = (...args: unknown[]) => {
    const pause = pauseFor(call, args);
    if (pause !== undefined) {
      emit({ event: 'paused', label: pause.label });
      if (pause.fifo === undefined) throw new Error(`pause ${pause.label} needs a fifo`);
      // Blocks until the test opens the FIFO's write end and writes.
      fs.readFileSync(pause.fifo);
    }
    return real(...args);
  };
}
syncBuiltinESMExports();

const { removeStaleFile } = await import('../exclusive-file.js');
const { claimPidFile } = await import('../pid-file.js');
const { startControlServer } = await import('../control-server.js');
const { recordStartAndCheckStorm } = await import('../respawn-storm.js');

type Claim = Awaited<ReturnType<typeof claimPidFile>>;
type Started = Awaited<ReturnType<typeof startControlServer>>;
let claim: Claim | undefined;
let server: Started | undefined;

interface Command {
  readonly op: string;
  readonly id?: number;
  readonly label?: string;
  readonly home?: string;
  readonly target?: string;
  readonly stalePrefix?: string;
  readonly nowMs?: number;
}

async function run(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'removeStaleFile': {
      const prefix = command.stalePrefix ?? '';
      return removeStaleFile(command.target ?? '', async (text) => text.startsWith(prefix));
    }
    case 'claim': {
      claim = await claimPidFile(command.home === undefined ? {} : { home: command.home });
      return { claimed: claim.claimed, reason: claim.claimed ? null : claim.reason };
    }
    case 'release': {
      if (claim?.claimed) await claim.release();
      return null;
    }
    case 'startServer': {
      server = await startControlServer(command.home === undefined ? {} : { home: command.home });
      return server.started
        ? { started: true, bindPath: server.server.bindPath }
        : { started: false, message: server.error.message };
    }
    case 'closeServer': {
      if (server?.started) await server.server.close();
      return null;
    }
    case 'recordStart': {
      const check = await recordStartAndCheckStorm(command.home ?? '', {
        now: () => command.nowMs ?? Date.now(),
      });
      return check.startsInWindow;
    }
    case 'exit':
      // Leaves through the exit hooks, as an early-exit path of the gateway would.
      process.exit(0);
      return null;
    default:
      throw new Error(`unknown op ${command.op}`);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line) as Command;
  if (command.op === 'resume') {
    const label = command.label ?? '';
    resumed.add(label);
    resumers.get(label)?.();
    return;
  }
  run(command).then(
    (result) => emit({ event: 'done', id: command.id, result }),
    (error: unknown) => emit({ event: 'done', id: command.id, error: String(error) }),
  );
});
emit({ event: 'ready', pid: process.pid });
