import { checkLoopLiveness } from './loop-liveness-check.js';

/**
 * The watchdog worker's body, as plain JavaScript. A TypeScript worker file does not load from
 * `src/` under test runners, so the worker is started with `eval: true` from this string, which works
 * the same from `src/` and from `dist/`. The verdict rule is `checkLoopLiveness`, embedded from its
 * compiled source so the worker and its tests run the same code.
 *
 * Why the inspector: a worker cannot end the process with an exit code of its own (`process.exit`
 * in a worker ends only the worker). A `Runtime.evaluate` sent through
 * `inspector.Session.connectToMainThread()` is run by V8 as an interrupt on the main thread, even
 * inside a busy JavaScript loop, so the main thread's fire function captures its own stack and
 * exits with code 75. A main thread stuck inside a native call never takes the interrupt; after a
 * grace period the worker writes the report itself and falls back to a signal.
 *
 * The worker is fully synchronous: it sleeps in `Atomics.wait` (a futex, no event-loop wake-ups of
 * its own) until a verdict could be due, reads the main loop's tick from shared memory and reads
 * phase labels with `receiveMessageOnPort`. Nothing wakes it in between: the main loop stamps its
 * tick without a notify. `stop()` notifies the stop slot, so every wait ends at once on a stop.
 */
export const LOOP_WATCHDOG_WORKER_SOURCE = String.raw`
'use strict';
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const data = workerData;
const ints = new Int32Array(data.shared, 0, data.intCount);
const tick = new BigInt64Array(data.shared, data.tickOffset, 1);
const delays = new Float64Array(data.shared, data.delayOffset, data.delayCount);
const STRIKES = data.intSlots.strikes;
const STOPPED = data.intSlots.stopped;
const MAIN_REPORTS = data.intSlots.mainReports;
const DELAY = data.delaySlots;

let session = null;
let sessionError = null;
if (!data.useInspector) {
  sessionError = 'watchdog armed off the main thread: the inspector cannot reach it';
} else try {
  const inspector = require('node:inspector');
  session = new inspector.Session();
  session.connectToMainThread();
} catch (error) {
  session = null;
  sessionError = String(error && error.message ? error.message : error);
}

const checkLoopLiveness = (${checkLoopLiveness.toString()});

// Monotonic milliseconds on the clock the main thread stamps its ticks with.
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const lastTickMs = () => Number(Atomics.load(tick, 0)) / 1e6;

let phase = null;
function readPhase() {
  for (let entry = receiveMessageOnPort(data.phasePort); entry !== undefined; entry = receiveMessageOnPort(data.phasePort)) {
    if (entry.message && entry.message.type === 'phase') phase = entry.message.phase;
  }
}

const stopped = () => Atomics.load(ints, STOPPED) === 1;
const stderr = (line) => {
  try { fs.writeSync(2, line + '\n'); } catch {}
};

function loadAndCpus() {
  let load1 = 'unknown';
  let ncpu = 'unknown';
  try {
    const value = os.loadavg()[0];
    if (Number.isFinite(value) && process.platform !== 'win32') load1 = value.toFixed(2);
  } catch {}
  try {
    const count = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    if (count > 0) ncpu = String(count);
  } catch {}
  return { load1, ncpu };
}

function fill(template, values) {
  return template.replace('{load1}', values.load1).replace('{ncpu}', values.ncpu);
}

function sleep(ms) {
  const end = performance.now() + ms;
  while (!stopped()) {
    const left = end - performance.now();
    if (left <= 0) return;
    Atomics.wait(ints, STOPPED, 0, left);
  }
}

function sleepUntilReported(reportsBefore, ms) {
  const end = performance.now() + ms;
  while (!stopped() && Atomics.load(ints, MAIN_REPORTS) === reportsBefore) {
    const left = end - performance.now();
    if (left <= 0) return;
    Atomics.wait(ints, MAIN_REPORTS, reportsBefore, Math.min(left, data.sliceMs));
  }
}

function fileAgeS(file) {
  if (!file) return null;
  try {
    return (Date.now() - fs.statSync(file).mtimeMs) / 1000;
  } catch {
    return null;
  }
}

function writeAtomic(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = file + '.' + process.pid + '.' + Date.now() + '.tmp';
  const fd = fs.openSync(temporary, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
}

function workerReport(strikes, reason) {
  readPhase();
  return {
    event: 'loop_liveness_watchdog',
    mode: data.mode,
    pid: process.pid,
    writtenAt: new Date().toISOString(),
    phase,
    strikes,
    probeIntervalS: data.intervalMs / 1000,
    probeTimeoutS: data.timeoutMs / 1000,
    maxStrikes: data.maxStrikes,
    lastProbeAnswerAgeS: (nowMs() - lastTickMs()) / 1000,
    heartbeatFileAgeS: fileAgeS(data.heartbeatFile),
    eventLoopDelayMs: { samples: delays[DELAY.samples], p50: delays[DELAY.p50], p90: delays[DELAY.p90], p99: delays[DELAY.p99], max: delays[DELAY.max], mean: delays[DELAY.mean] },
    host: loadAndCpus(),
    stack: null,
    stackSource: 'unavailable',
    stackUnavailableReason: reason,
    exit: data.mode === 'exit' ? { signal: data.fallbackSignal, code: null } : null,
  };
}

function writeFallbackReport(strikes, reason) {
  try {
    const file = path.join(data.reportDirectory, 'loop-watchdog-' + process.pid + '-' + Date.now() + '.json');
    writeAtomic(file, JSON.stringify(workerReport(strikes, reason), null, 2) + '\n');
    stderr(data.reportWrittenTemplate.replace('{path}', () => file));
  } catch (error) {
    stderr(data.reportFailedTemplate.replace('{error}', () => String(error && error.message)));
  }
}

function markDegraded() {
  if (!data.runtimeStatusFile) return;
  try {
    let current = {};
    try {
      const parsed = JSON.parse(fs.readFileSync(data.runtimeStatusFile, 'utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) current = parsed;
    } catch {}
    const next = Object.assign(current, {
      gateway_state: 'degraded',
      exit_reason: data.exitReason,
      restart_requested: data.exitCode === 75,
      updated_at: new Date().toISOString(),
    });
    writeAtomic(data.runtimeStatusFile, JSON.stringify(next));
  } catch {}
}

function askMainThread(strikes) {
  if (!session) return false;
  const payload = JSON.stringify({
    strikes,
    lastProbeAnswerAgeS: (nowMs() - lastTickMs()) / 1000,
  });
  const expression =
    'globalThis[Symbol.for(' + JSON.stringify(data.registryKey) + ')]?.get(' + data.id + ')?.(' + payload + ')';
  try {
    session.post('Runtime.evaluate', { expression });
    return true;
  } catch {
    return false;
  }
}

function finalPath(strikes) {
  // Stop-flag check 2 of 3 (the first is the probe wait itself).
  if (stopped()) return 'stopped';
  const values = loadAndCpus();
  if (data.mode === 'warn') {
    stderr(fill(data.warnTemplate, values));
    const reportsBefore = Atomics.load(ints, MAIN_REPORTS);
    const asked = askMainThread(strikes);
    if (asked) sleepUntilReported(reportsBefore, data.exitGraceMs);
    if (stopped()) return 'stopped';
    if (Atomics.load(ints, MAIN_REPORTS) === reportsBefore) {
      writeFallbackReport(
        strikes,
        asked ? 'main thread did not run the inspector evaluation within ' + data.exitGraceMs / 1000 + 's (stuck in a native call?)' : sessionError || 'inspector unavailable',
      );
    }
    return 'warned';
  }
  stderr(fill(data.criticalTemplate, values));
  // Stop-flag check 3 of 3 before handing the exit to the main thread.
  if (stopped()) return 'stopped';
  const asked = askMainThread(strikes);
  // The main thread's fire function writes the report and exits 75. If it never runs (native
  // call, no inspector), fall back after the grace period.
  sleep(asked ? data.exitGraceMs : 0);
  if (stopped()) return 'stopped';
  writeFallbackReport(
    strikes,
    asked ? 'main thread did not run the inspector evaluation within ' + data.exitGraceMs / 1000 + 's (stuck in a native call?)' : sessionError || 'inspector unavailable',
  );
  if (stopped()) return 'stopped';
  markDegraded();
  if (stopped()) return 'stopped';
  process.kill(process.pid, data.fallbackSignal);
  return 'killed';
}

function run() {
  // Misses count only from the end of the startup grace (the main thread's clock, shared).
  sleep(data.watchFromMs - nowMs());
  if (stopped()) return;
  // The last answer of the wedge already reported in warn mode: one report per wedge.
  let reportedAnswerAt = null;
  let nextCheckAt = data.watchFromMs;
  while (!stopped()) {
    // Nothing wakes the worker but a stop: the main loop stamps its answers without a notify.
    sleep(nextCheckAt - nowMs());
    if (stopped()) return;
    const lastAnswerAt = Math.max(lastTickMs(), data.watchFromMs);
    const check = checkLoopLiveness({
      now: nowMs(),
      scheduledAt: nextCheckAt,
      lastAnswerAt,
      intervalMs: data.intervalMs,
      timeoutMs: data.timeoutMs,
      maxStrikes: data.maxStrikes,
    });
    nextCheckAt = check.nextCheckAt;
    // The verdict is "maxStrikes consecutive misses"; a late wake-up must not overstate it.
    const strikes = Math.min(check.strikes, data.maxStrikes);
    Atomics.store(ints, STRIKES, strikes);
    if (!check.wedged) continue;
    if (reportedAnswerAt === lastAnswerAt) continue;
    // Stop-flag check 1 of 3: a late stop wins over a miss.
    if (stopped()) return;
    const outcome = finalPath(strikes);
    if (outcome === 'stopped') return;
    if (outcome === 'warned') reportedAnswerAt = lastAnswerAt;
  }
}

try {
  run();
} catch (error) {
  stderr('Loop watchdog worker failed: ' + (error && error.stack ? error.stack : error));
}
`;
