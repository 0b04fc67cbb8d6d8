import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageRoot = path.resolve(here, '..');
const agentScript = path.join(here, 'test-fixtures', 'race-agent.ts');

/** Where a race agent stops (see test-fixtures/race-agent.ts). */
export interface RacePause {
  readonly label: string;
  /** fs function names: `rm`, `unlink`, `rename`, `link`, `rmdir`, `rmSync`, `unlinkSync`, … */
  readonly calls: readonly string[];
  /** Which argument is compared (default 0). */
  readonly arg?: number;
  readonly path: string;
  /** Match any path inside the folder `path` too. */
  readonly prefix?: boolean;
  /** Armed only once the pause of this label has stopped. */
  readonly after?: string;
  /** For synchronous calls: the FIFO the agent blocks on until `resume`. */
  readonly fifo?: string;
}

export type RaceEvent =
  | { readonly event: 'ready'; readonly pid: number }
  | { readonly event: 'paused'; readonly label: string }
  | { readonly event: 'token-busy' }
  | {
      readonly event: 'done';
      readonly id: number;
      readonly result?: unknown;
      readonly error?: string;
    };

export interface RaceAgent {
  readonly pid: number;
  /** Every event so far, in order. */
  readonly events: readonly RaceEvent[];
  /** Starts an operation; `done(id)` waits for its result. */
  start(op: string, fields?: Record<string, unknown>): number;
  /** Runs an operation to its end and returns its result (throws if it threw). */
  run(op: string, fields?: Record<string, unknown>): Promise<unknown>;
  done(id: number): Promise<unknown>;
  /** The first event that `match` accepts, from the `from`-th event on (default: all of them). */
  waitFor(match: (event: RaceEvent) => boolean, from?: number): Promise<RaceEvent>;
  paused(label: string): Promise<RaceEvent>;
  /** Lets a paused call go on (through its FIFO for a synchronous one). */
  resume(label: string): Promise<void>;
  readonly exited: Promise<number | null>;
}

/**
 * Starts a race agent: a separate Node process running this package, which stops at the given
 * file-system calls until told to go on. Killed when the test finishes.
 */
export async function startRaceAgent(
  options: { readonly pauses?: readonly RacePause[] } = {},
): Promise<RaceAgent> {
  const pauses = (options.pauses ?? []).map((pause) => ({ arg: 0, ...pause }));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=@hermes/source', '--import', 'tsx', agentScript],
    {
      cwd: packageRoot,
      env: { ...process.env, HERMES_RACE_PAUSES: JSON.stringify(pauses) },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const events: RaceEvent[] = [];
  const waiters = new Set<() => void>();
  if (!child.stdout) throw new Error('race agent without stdout');
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    events.push(JSON.parse(line) as RaceEvent);
    for (const waiter of waiters) waiter();
  });
  exited.then(() => {
    for (const waiter of waiters) waiter();
  });

  const waitFor = (match: (event: RaceEvent) => boolean, from = 0) =>
    new Promise<RaceEvent>((resolve, reject) => {
      const check = () => {
        const found = events.slice(from).find(match);
        if (found !== undefined) {
          waiters.delete(check);
          resolve(found);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          reject(new Error(`race agent exited first; stderr:\n${stderr}`));
        }
      };
      waiters.add(check);
      check();
    });

  const ready = await waitFor((event) => event.event === 'ready');
  let nextId = 1;
  const send = (command: Record<string, unknown>) =>
    child.stdin?.write(`${JSON.stringify(command)}\n`);
  const done = async (id: number) => {
    const event = (await waitFor((item) => item.event === 'done' && item.id === id)) as {
      result?: unknown;
      error?: string;
    };
    if (event.error !== undefined) throw new Error(event.error);
    return event.result;
  };
  const agent: RaceAgent = {
    pid: (ready as { pid: number }).pid,
    events,
    exited,
    start(op, fields = {}) {
      const id = nextId;
      nextId += 1;
      send({ ...fields, op, id });
      return id;
    },
    run(op, fields) {
      return done(agent.start(op, fields));
    },
    done,
    waitFor,
    paused: (label) => waitFor((event) => event.event === 'paused' && event.label === label),
    async resume(label) {
      const fifo = pauses.find((pause) => pause.label === label)?.fifo;
      if (fifo !== undefined) await writeFile(fifo, 'go');
      else send({ op: 'resume', label });
    },
  };
  return agent;
}
