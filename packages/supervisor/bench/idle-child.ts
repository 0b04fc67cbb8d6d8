/**
 * Bench child. BENCH_MODE=idle: idles for BENCH_WINDOW_MS (with or without the watchdog per
 * BENCH_WATCHDOG) and prints the CPU time the whole process (all threads) used in that window and
 * its thread wake-ups.
 * BENCH_MODE=block: arms the watchdog, then blocks its loop and prints the wall time it started.
 */
import { startLoopWatchdog } from '../src/index.js';

const mode = process.env.BENCH_MODE ?? 'idle';
const intervalS = Number(process.env.BENCH_INTERVAL_S ?? '0.1');
const watchdog =
  process.env.BENCH_WATCHDOG === '1'
    ? startLoopWatchdog({
        probeIntervalS: intervalS,
        probeTimeoutS: Number(process.env.BENCH_TIMEOUT_S ?? '1'),
        maxStrikes: Number(process.env.BENCH_STRIKES ?? '3'),
        reportDirectory: process.env.BENCH_REPORTS ?? '/tmp',
        writeLine: () => undefined,
      })
    : undefined;

// Let startup work (module loading, JIT) finish before measuring.
await new Promise((resolve) => setTimeout(resolve, 1000));

if (mode === 'idle') {
  const windowMs = Number(process.env.BENCH_WINDOW_MS ?? '4000');
  const before = process.cpuUsage();
  // Voluntary context switches of all threads: every wake-up from a sleep is one. On a virtual
  // machine a wake-up is most of the idle cost, and this count does not move with the host's load.
  const switchesBefore = process.resourceUsage().voluntaryContextSwitches;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const used = process.cpuUsage(before);
  const wakeUps = process.resourceUsage().voluntaryContextSwitches - switchesBefore;
  const wallMs = performance.now() - started;
  console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, wakeUps, wallMs }));
  await watchdog?.stop();
} else {
  console.log(JSON.stringify({ blockStartedAt: Date.now() }));
  for (;;) {
    // blocked on purpose
  }
}
