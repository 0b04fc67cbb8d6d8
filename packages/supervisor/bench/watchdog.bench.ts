/**
 * Loop watchdog benchmark (run with `pnpm --filter @hermes/supervisor bench`).
 *
 * 1. Overhead: CPU time of an idle process with the watchdog probing every 100 ms vs the same idle
 *    process without it, over the same wall time, alternating runs; reported as extra CPU per wall
 *    second (target < 1 %), with the thread wake-ups behind it (a count that, unlike CPU time,
 *    does not move with the host's load).
 * 2. Detection latency: a process blocks its loop; median time from the block to its exit (75),
 *    against the configured interval × strikes.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'idle-child.ts');
const reports = await mkdtemp(path.join(tmpdir(), 'hermes-bench-'));

interface ChildResult {
  readonly lines: string[];
  readonly code: number | null;
  readonly exitedAt: number;
}

function run(env: Record<string, string>): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(
      process.execPath,
      ['--conditions=@hermes/source', '--import', 'tsx', child],
      {
        cwd: path.join(here, '..'),
        env: { ...process.env, BENCH_REPORTS: reports, ...env },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    process_.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    process_.once('error', reject);
    process_.once('exit', (code) =>
      resolve({ lines: out.trim().split('\n').filter(Boolean), code, exitedAt: Date.now() }),
    );
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const windowMs = 4000;
const pairs = 5;
// The setting for the overhead target.
const idleIntervalMs = 100;
const idleTimeoutS = 1;
interface IdleRun {
  readonly cpuMs: number;
  readonly wakeUps: number;
}
const without: IdleRun[] = [];
const withWatchdog: IdleRun[] = [];
for (let pair = 0; pair < pairs; pair += 1) {
  for (const watchdog of ['0', '1']) {
    const result = await run({
      BENCH_MODE: 'idle',
      BENCH_WATCHDOG: watchdog,
      BENCH_INTERVAL_S: String(idleIntervalMs / 1000),
      BENCH_TIMEOUT_S: String(idleTimeoutS),
      BENCH_WINDOW_MS: String(windowMs),
    });
    const measured = JSON.parse(result.lines.at(-1) ?? '{}') as IdleRun;
    (watchdog === '1' ? withWatchdog : without).push(measured);
  }
}
const baseline = median(without.map((idle) => idle.cpuMs));
const armed = median(withWatchdog.map((idle) => idle.cpuMs));
const overheadPercent = ((armed - baseline) / windowMs) * 100;
const baselineWakeUps = median(without.map((idle) => idle.wakeUps));
const armedWakeUps = median(withWatchdog.map((idle) => idle.wakeUps));
console.log(
  'idle CPU over a %d ms window, watchdog at %d ms interval / %d s timeout (median of %d runs each)',
  windowMs,
  idleIntervalMs,
  idleTimeoutS,
  pairs,
);
console.log('  without watchdog : %s ms CPU', baseline.toFixed(1));
console.log('  watchdog @%d ms : %s ms CPU', idleIntervalMs, armed.toFixed(1));
console.log(
  '  overhead         : %s ms CPU = %s %% of one core (ratio %sx baseline)',
  (armed - baseline).toFixed(1),
  overheadPercent.toFixed(2),
  (armed / Math.max(baseline, 0.001)).toFixed(2),
);
console.log(
  '  thread wake-ups  : %s without, %s with = %s extra per second (the probe timer alone is %s)',
  baselineWakeUps,
  armedWakeUps,
  (((armedWakeUps - baselineWakeUps) / windowMs) * 1000).toFixed(1),
  (1000 / idleIntervalMs).toFixed(0),
);

const intervalS = 0.2;
const timeoutS = 0.2;
const strikes = 3;
const trials = 5;
const latencies: number[] = [];
const codes: (number | null)[] = [];
for (let trial = 0; trial < trials; trial += 1) {
  const result = await run({
    BENCH_MODE: 'block',
    BENCH_WATCHDOG: '1',
    BENCH_INTERVAL_S: String(intervalS),
    BENCH_TIMEOUT_S: String(timeoutS),
    BENCH_STRIKES: String(strikes),
  });
  const started = JSON.parse(result.lines[0] ?? '{}') as { blockStartedAt: number };
  latencies.push(result.exitedAt - started.blockStartedAt);
  codes.push(result.code);
}
const nominalMs = intervalS * strikes * 1000;
console.log(
  'detection latency (interval %ss, timeout %ss, %d strikes; %d trials, exit codes %s)',
  intervalS,
  timeoutS,
  strikes,
  trials,
  codes.join(','),
);
console.log('  median block → exit : %s ms', median(latencies).toFixed(0));
console.log('  interval × strikes  : %s ms', nominalMs.toFixed(0));
console.log('  ratio               : %sx', (median(latencies) / nominalMs).toFixed(2));
const boundMs = (intervalS + timeoutS) * strikes * 1000;
console.log(
  '  vs (interval + timeout) × strikes = %s ms : %sx',
  boundMs.toFixed(0),
  (median(latencies) / boundMs).toFixed(2),
);
await rm(reports, { recursive: true, force: true });
