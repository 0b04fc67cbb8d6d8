/**
 * The shutdown watchdog worker's body, as plain JavaScript (see the loop watchdog worker for why a
 * string). It waits for the teardown-done flag in ≤ 1 s slices; on expiry it asks the main thread
 * (through an inspector evaluation, which runs even inside a busy loop) to write its forensics and
 * exit, and if the main thread cannot run JavaScript it does the same work itself and signals.
 */
export const SHUTDOWN_WATCHDOG_WORKER_SOURCE = String.raw`
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const data = workerData;
const flags = new Int32Array(data.shared, 0, 1);
const DONE = 0;
let lastSnapshot = null;
parentPort.on('message', (message) => {
  if (message && message.type === 'snapshot') lastSnapshot = message.snapshot;
});

let session = null;
let sessionError = 'watchdog armed off the main thread: the inspector cannot reach it';
if (data.useInspector) {
  try {
    const inspector = require('node:inspector');
    session = new inspector.Session();
    session.connectToMainThread();
  } catch (error) {
    session = null;
    sessionError = String(error && error.message ? error.message : error);
  }
}

const done = () => Atomics.load(flags, DONE) === 1;

async function waitUntil(ms) {
  const end = performance.now() + ms;
  while (!done()) {
    const left = end - performance.now();
    if (left <= 0) return;
    const wait = Atomics.waitAsync(flags, DONE, 0, Math.min(left, data.sliceMs));
    if (wait.async) await wait.value;
  }
}

function writeStderr(line) {
  try { fs.writeSync(2, line + '\n'); } catch {}
}

function fallback(reason) {
  try {
    fs.mkdirSync(path.dirname(data.logFile), { recursive: true, mode: 0o700 });
    const header = {
      event: 'shutdown_watchdog_fired',
      pid: process.pid,
      delay_s: data.delayS,
      fired_at: new Date().toISOString(),
      snapshot: lastSnapshot,
    };
    fs.appendFileSync(
      data.logFile,
      JSON.stringify(header) + '\n' + data.dumpStart + '\n(main thread stack unavailable: ' + reason + ')\n' + data.dumpEnd + '\n',
      { mode: 0o600 },
    );
  } catch {}
  writeStderr(data.stderrLine);
  writeStderr(data.criticalLine);
  for (const file of data.removeFiles) {
    try { fs.rmSync(file, { force: true }); } catch {}
  }
  if (data.runtimeStatusFile) {
    try {
      let record = {};
      try {
        const parsed = JSON.parse(fs.readFileSync(data.runtimeStatusFile, 'utf8'));
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) record = parsed;
      } catch {}
      record.gateway_state = 'degraded';
      record.exit_reason = data.exitReason;
      record.restart_requested = data.exitCode === 75;
      record.updated_at = new Date().toISOString();
      const temporary = data.runtimeStatusFile + '.' + process.pid + '.tmp';
      fs.writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
      fs.renameSync(temporary, data.runtimeStatusFile);
    } catch {}
  }
}

async function run() {
  await waitUntil(data.delayS * 1000);
  if (done()) return;
  let asked = false;
  if (session) {
    try {
      session.post('Runtime.evaluate', {
        expression: 'globalThis[Symbol.for(' + JSON.stringify(data.registryKey) + ')]?.get(' + data.id + ')?.()',
      });
      asked = true;
    } catch {}
  }
  if (asked) await waitUntil(data.exitGraceMs);
  if (done()) return;
  fallback(asked ? 'main thread did not run the inspector evaluation (stuck in a native call?)' : sessionError);
  if (done()) return;
  process.kill(process.pid, data.fallbackSignal);
}

run().catch((error) => writeStderr('Shutdown watchdog worker failed: ' + (error && error.stack ? error.stack : error)));
`;
