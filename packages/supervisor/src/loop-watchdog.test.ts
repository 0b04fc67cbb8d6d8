import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  LOOP_WATCHDOG_EXIT_CODE,
  LOOP_WATCHDOG_EXIT_REASON,
  LOOP_WATCHDOG_FALLBACK_SIGNAL,
  messages,
} from './constants.js';
import { SupervisorError } from './errors.js';
import { heartbeatFilePath } from './heartbeat.js';
import {
  type LoopWatchdogOptions,
  type LoopWatchdogReport,
  startLoopWatchdog,
} from './loop-watchdog.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(packageRoot, 'test/fixtures/loop-watchdog-child.ts');

// Small values: 0.2 s interval, 0.2 s timeout, 3 strikes ⇒ about 1.2 s of block before the verdict.
// The startup grace is left at its default (0).
const fast = { probeIntervalS: 0.2, probeTimeoutS: 0.2, maxStrikes: 3 };

async function runChild(options: {
  behaviour: string;
  watchdog: Partial<LoopWatchdogOptions>;
  blockMs?: number;
}) {
  const child = await spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', fixture],
    cwd: packageRoot,
    env: {
      ...process.env,
      WATCHDOG_OPTIONS: JSON.stringify({ ...fast, ...options.watchdog }),
      WATCHDOG_BEHAVIOUR: options.behaviour,
      WATCHDOG_BLOCK_MS: String(options.blockMs ?? 0),
    },
    readyLine: 'ready',
  });
  return child;
}

async function reportFiles(home: string): Promise<string[]> {
  const directory = path.join(home, 'logs');
  if (!existsSync(directory)) return [];
  // Final reports only: a poll may catch the atomic write's temp file just before its rename.
  const names = (await readdir(directory)).filter((name) =>
    /^loop-watchdog-\d+-\d+\.json$/.test(name),
  );
  return names.map((name) => path.join(directory, name));
}

async function readReports(home: string): Promise<LoopWatchdogReport[]> {
  const files = await reportFiles(home);
  return Promise.all(
    files.map(async (file) => JSON.parse(await readFile(file, 'utf8')) as LoopWatchdogReport),
  );
}

/** A heartbeat file last written `ageS` ago, so the report's heartbeat age can be checked. */
async function writeOldHeartbeat(home: string, ageS: number): Promise<void> {
  const file = heartbeatFilePath(home);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ pid: 1 }));
  const then = new Date(Date.now() - ageS * 1000);
  await utimes(file, then, then);
}

/** Delay figures that were measured: samples taken, percentiles in order. */
function expectMeasuredDelays(report: LoopWatchdogReport | undefined): void {
  const delays = report?.eventLoopDelayMs;
  expect(delays?.samples).toBeGreaterThan(0);
  expect(delays?.p50).toBeGreaterThan(0);
  expect(delays?.p50).toBeLessThanOrEqual(delays?.p90 ?? 0);
  expect(delays?.p90).toBeLessThanOrEqual(delays?.p99 ?? 0);
  expect(delays?.p99).toBeLessThanOrEqual(delays?.max ?? 0);
  expect(delays?.mean).toBeGreaterThan(0);
}

async function readStatus(home: string): Promise<Record<string, unknown> | undefined> {
  const file = path.join(home, 'gateway_state.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
}

/** The native-call fixture's `sleep` child outlives a SIGKILLed parent: end the whole group. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Resolves with the exit, or with `undefined` when the process is still running after `ms`. */
async function exitWithin(
  exited: Promise<{ code: number | null; signal: string | null }>,
  ms: number,
) {
  return Promise.race([
    exited,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms)),
  ]);
}

describe('loop watchdog (real processes)', () => {
  it('exits with code 75 after a real busy loop, with the phase, the stack and a degraded status', async () => {
    const home = await tempHome();
    await writeOldHeartbeat(home.path, 30);
    const child = await runChild({
      behaviour: 'spin',
      // A fine delay sampler so the histogram has samples before the block.
      watchdog: { home: home.path, eventLoopDelayResolutionMs: 20 },
    });
    // Verdict after ~1.2 s; generous bound for a loaded CI machine.
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: LOOP_WATCHDOG_EXIT_CODE, signal: null });
    expect(child.stderr()).toContain(
      messages.loopWatchdogFired(3, 'X', 'Y', LOOP_WATCHDOG_EXIT_CODE).split('; host')[0],
    );
    const [report, ...others] = await readReports(home.path);
    expect(others).toHaveLength(0);
    expect(report?.phase?.label).toBe('fts-rebuild');
    expect(report?.strikes).toBe(3);
    expect(report?.stackSource).toBe('inspector-interrupt');
    // The innermost frames of the fixture are the hot loop; the pause may land inside a built-in it
    // calls (`performance.now` and its validators), whose frames come first.
    const fixtureFrames = (report?.stack ?? '')
      .split('\n')
      .filter((frame) => frame.includes('loop-watchdog-child'));
    expect(fixtureFrames[0]).toMatch(/^at spinFor /);
    expect(fixtureFrames[1]).toMatch(/^at inTheHotLoop /);
    expect(report?.exit).toEqual({ code: 75, signal: null });
    expect(report?.heartbeatFileAgeS).toBeGreaterThanOrEqual(30);
    expect(report?.heartbeatFileAgeS).toBeLessThan(300);
    expect(report?.lastProbeAnswerAgeS).toBeGreaterThanOrEqual(0.6);
    expectMeasuredDelays(report);
    const [file] = await reportFiles(home.path);
    expect(path.basename(file ?? '')).toMatch(
      new RegExp(`^loop-watchdog-${child.pid}-\\d+\\.json$`),
    );
    expect((await stat(file ?? '')).mode & 0o777).toBe(0o600);
    expect(child.stderr()).toContain(messages.loopWatchdogReportWritten(file ?? ''));
    // A hard exit: `exit` listeners (cleanup that could itself be wedged) do not run.
    expect(child.stdout()).not.toContain('exit listener ran');
    const status = await readStatus(home.path);
    expect(status).toMatchObject({
      gateway_state: 'degraded',
      exit_reason: LOOP_WATCHDOG_EXIT_REASON,
      restart_requested: true,
    });
  });

  it('never kills a busy process that keeps yielding to its event loop', async () => {
    const home = await tempHome();
    // 3 s of 20 ms work slices is fifteen probe intervals of busy-but-healthy.
    const child = await runChild({
      behaviour: 'yield',
      watchdog: { home: home.path },
      blockMs: 3000,
    });
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('survived');
    expect(await readReports(home.path)).toHaveLength(0);
    expect(await readStatus(home.path)).toBeUndefined();
  });

  it('a process frozen whole (SIGSTOP) for longer than the verdict window survives the thaw', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'idle',
      watchdog: { home: home.path },
      blockMs: 4000,
    });
    // Both threads stop: 2.5 s is two verdict windows (3 × 0.4 s) and more. A frozen worker is no
    // witness to the loop; after the thaw the loop answers and nothing fires.
    child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    child.kill('SIGCONT');
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('survived');
    expect(await readReports(home.path)).toHaveLength(0);
  });

  it('warn mode writes forensics and keeps the process alive through the block', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'spin-for',
      watchdog: { home: home.path, mode: 'warn' },
      blockMs: 3000,
    });
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('survived');
    expect(child.stdout()).toContain('stall reported with 3 strikes');
    expect(child.stderr()).toContain('warn mode: writing forensics and staying up');
    const reports = await readReports(home.path);
    // One report per wedge, not one per missed probe.
    expect(reports).toHaveLength(1);
    expect(reports[0]?.mode).toBe('warn');
    expect(reports[0]?.stack).toContain('inTheHotLoop');
    expect(await readStatus(home.path)).toBeUndefined();
  });

  it('warn mode survives an onStall hook that throws or rejects: the error is logged and the next wedge is reported too', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'spin-twice-throwing-hook',
      watchdog: { home: home.path, mode: 'warn' },
      blockMs: 3000,
    });
    const exit = await exitWithin(child.exited, 20_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('survived');
    // Both wedges reached the hook: the watchdog kept running after the first throw.
    expect(child.stdout().match(/stall reported with \d+ strikes/g)).toHaveLength(2);
    expect(child.stderr()).toContain(messages.loopWatchdogOnStallFailed('onStall hook exploded'));
    expect(child.stderr()).toContain(
      messages.loopWatchdogOnStallFailed('async onStall hook rejected'),
    );
    expect(await readReports(home.path)).toHaveLength(2);
  });

  it('a stop during the final path disarms the exit', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'stop-in-hook',
      watchdog: { home: home.path, exitGraceS: 0.3 },
      blockMs: 3000,
    });
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toContain('hook ran');
    expect(child.stdout()).toContain('survived');
    // Stopped before the status write: nothing claims the gateway is degraded.
    expect(await readStatus(home.path)).toBeUndefined();
  });

  it('with the default startup grace a loop blocked from arming is judged (interval + timeout) × strikes after arming', async () => {
    const home = await tempHome();
    const child = await runChild({ behaviour: 'spin-at-arm', watchdog: { home: home.path } });
    const armedAt = BigInt(/armed-at=(\d+)/.exec(child.stdout())?.[1] ?? '0');
    let exitedAt = 0n;
    const exit = await exitWithin(
      child.exited.then((result) => {
        exitedAt = process.hrtime.bigint();
        return result;
      }),
      15_000,
    );
    expect(exit).toEqual({ code: LOOP_WATCHDOG_EXIT_CODE, signal: null });
    const elapsedMs = Number(exitedAt - armedAt) / 1e6;
    // Never before 3 × (0.2 + 0.2) s: the loop has not answered once since arming. Well before any
    // grace of seconds (the old default, 60 s, would not judge it for a minute).
    expect(elapsedMs).toBeGreaterThanOrEqual(1200);
    expect(elapsedMs).toBeLessThan(10_000);
    const [report] = await readReports(home.path);
    expect(report?.strikes).toBe(3);
    expect(report?.lastProbeAnswerAgeS).toBeGreaterThanOrEqual(1.2);
  });

  it('the startup grace window ignores a block right after arming', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'spin-for',
      watchdog: { home: home.path, startupGraceS: 4 },
      blockMs: 2000,
    });
    const exit = await exitWithin(child.exited, 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await readReports(home.path)).toHaveLength(0);
  });

  it('falls back to a signal when the main thread is stuck inside a native call', async () => {
    const home = await tempHome();
    await writeOldHeartbeat(home.path, 30);
    const child = await runChild({
      behaviour: 'native',
      watchdog: { home: home.path, exitGraceS: 0.5, eventLoopDelayResolutionMs: 20 },
    });
    const exit = await exitWithin(child.exited, 15_000);
    killGroup(child.pid);
    expect(exit).toEqual({ code: null, signal: LOOP_WATCHDOG_FALLBACK_SIGNAL });
    const [report] = await readReports(home.path);
    expect(report?.stackSource).toBe('unavailable');
    expect(report?.stackUnavailableReason).toMatch(/native call/);
    expect(report?.phase?.label).toBe('native-call');
    expect(report?.exit).toEqual({ code: null, signal: LOOP_WATCHDOG_FALLBACK_SIGNAL });
    // Written by the worker from what the main thread last published.
    const [file] = await reportFiles(home.path);
    expect(child.stderr()).toContain(messages.loopWatchdogReportWritten(file ?? ''));
    expect(report?.strikes).toBe(3);
    expect(report?.heartbeatFileAgeS).toBeGreaterThanOrEqual(30);
    expectMeasuredDelays(report);
    expect(await readStatus(home.path)).toMatchObject({
      gateway_state: 'degraded',
      exit_reason: LOOP_WATCHDOG_EXIT_REASON,
      restart_requested: true,
    });
  });

  it('warn mode reports a native-call wedge from the worker and kills nothing', async () => {
    const home = await tempHome();
    const child = await runChild({
      behaviour: 'native',
      watchdog: { home: home.path, mode: 'warn', exitGraceS: 0.5 },
    });
    let reports: LoopWatchdogReport[] = [];
    const deadline = performance.now() + 15_000;
    while (reports.length === 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reports = await readReports(home.path);
    }
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ mode: 'warn', stackSource: 'unavailable', exit: null });
    expect(await exitWithin(child.exited, 500)).toBeUndefined();
    expect(await readStatus(home.path)).toBeUndefined();
    killGroup(child.pid);
  });
});

describe('loop watchdog (in process)', () => {
  it('rejects options that are not finite positive numbers', () => {
    const attempts: Partial<LoopWatchdogOptions>[] = [
      { probeIntervalS: 0 },
      { probeTimeoutS: Number.NaN },
      { maxStrikes: 0 },
      { maxStrikes: 1.5 },
      { startupGraceS: -1 },
    ];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        startLoopWatchdog({ ...fast, ...attempt });
      } catch (error) {
        caught = error;
      }
      expect(SupervisorError.isInstance(caught)).toBe(true);
      expect((caught as SupervisorError).code).toBe('invalid_watchdog_options');
    }
  });

  it('answers probes from a healthy loop and reports no strikes', async () => {
    const home = await tempHome();
    const watchdog = startLoopWatchdog({
      ...fast,
      probeIntervalS: 0.05,
      probeTimeoutS: 1,
      home: home.path,
    });
    const deadline = performance.now() + 10_000;
    while (watchdog.probesAnswered < 3 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(watchdog.probesAnswered).toBeGreaterThanOrEqual(3);
    expect(watchdog.strikes).toBe(0);
    expect(watchdog.reports).toHaveLength(0);
    await watchdog.stop();
  });

  it('after a late answer between windows the probes return to the interval cadence', async () => {
    const watchdog = startLoopWatchdog({
      probeIntervalS: 0.2,
      probeTimeoutS: 0.2,
      maxStrikes: 1000,
      mode: 'warn',
      writeLine: () => undefined,
    });
    try {
      // Right after an answer at L: probe 1 goes out at L + 0.6 s, so a timer that fires at
      // L + 0.45 s (the loop blocked until then) answers nothing and waits 0.15 s for it.
      const answered = watchdog.probesAnswered;
      while (watchdog.probesAnswered === answered) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      const blockedUntil = performance.now() + 450;
      while (performance.now() < blockedUntil) {
        // the loop is blocked on purpose
      }
      await new Promise((resolve) => setTimeout(resolve, 400));
      const before = watchdog.probesAnswered;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // One answer per 0.2 s at most (late timers only lower the count); a timer left at the
      // 0.15 s wait would answer about 13 times.
      expect(watchdog.probesAnswered - before).toBeLessThanOrEqual(11);
      expect(watchdog.probesAnswered - before).toBeGreaterThan(0);
    } finally {
      await watchdog.stop();
    }
  });

  it('labels nested phases and restores the outer one when the inner ends', async () => {
    const watchdog = startLoopWatchdog({ ...fast, startupGraceS: 60 });
    expect(watchdog.currentPhase).toBeNull();
    const outer = watchdog.phase('startup');
    const inner = await watchdog.withPhase('fts-rebuild', async () => watchdog.currentPhase?.label);
    expect(inner).toBe('fts-rebuild');
    expect(watchdog.currentPhase?.label).toBe('startup');
    outer.end();
    outer.end();
    expect(watchdog.currentPhase).toBeNull();
    await watchdog.stop();
  });
});
