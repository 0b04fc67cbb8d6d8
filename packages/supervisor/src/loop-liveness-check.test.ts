import {
  DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
  DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
  DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
} from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { answerLoopProbe, checkLoopLiveness, loopWatchStartsAt } from './loop-liveness-check.js';
import { LOOP_WATCHDOG_WORKER_SOURCE } from './loop-watchdog-worker-source.js';

const defaults = { intervalMs: 30_000, timeoutMs: 10_000, maxStrikes: 3 };
const windowMs = defaults.intervalMs + defaults.timeoutMs;

/**
 * A simulated main loop on a fake clock: `freeAt(t)` is the first moment at or after `t` when the
 * loop turns (t itself when it is idle). Its unref'd timer fires at the first free moment at or
 * after each due time and follows `answerLoopProbe`, as the main thread does. Returns the answers.
 */
function tickTimes(options: {
  intervalMs: number;
  timeoutMs: number;
  until: number;
  freeAt: (time: number) => number;
  /** The watch's origin (`loopWatchStartsAt`); armed at 0. */
  watchFrom?: number;
}): number[] {
  const answers: number[] = [];
  let lastAnswerAt = 0;
  let due = options.intervalMs;
  for (;;) {
    const fired = options.freeAt(due);
    if (fired > options.until) return answers;
    const decision = answerLoopProbe({
      ...options,
      now: fired,
      lastAnswerAt: Math.max(lastAnswerAt, options.watchFrom ?? 0),
    });
    if (decision.answered) {
      answers.push(fired);
      lastAnswerAt = fired;
    }
    due = fired + decision.nextTickInMs;
  }
}

/**
 * Runs the worker's schedule against those answers: returns every moment it looked and the verdict.
 * While the whole process is `frozen`, the worker cannot wake: it wakes when the freeze ends.
 */
function watch(options: {
  ticks: readonly number[];
  until: number;
  intervalMs: number;
  timeoutMs: number;
  maxStrikes: number;
  frozen?: readonly [number, number];
  /** The watch's origin (`loopWatchStartsAt`), as the worker gets it; armed at 0. */
  watchFrom?: number;
}): { checks: number[]; wedgedAt: number | undefined; strikes: number | undefined } {
  const checks: number[] = [];
  const watchFrom = options.watchFrom ?? 0;
  let scheduledAt = watchFrom;
  for (;;) {
    const [frozenFrom, frozenUntil] = options.frozen ?? [0, 0];
    const now = scheduledAt >= frozenFrom && scheduledAt < frozenUntil ? frozenUntil : scheduledAt;
    const latestTick = options.ticks.filter((tick) => tick <= now).at(-1) ?? 0;
    const check = checkLoopLiveness({
      ...options,
      now,
      scheduledAt,
      lastAnswerAt: Math.max(latestTick, watchFrom),
    });
    if (check.wedged) return { checks, wedgedAt: now, strikes: check.strikes };
    scheduledAt = check.nextCheckAt;
    if (scheduledAt > options.until) return { checks, wedgedAt: undefined, strikes: undefined };
    checks.push(scheduledAt);
  }
}

/** The reference algorithm on the same fake loop: sleep, probe, wait up to the timeout, strike. */
function probeLoop(options: {
  intervalMs: number;
  timeoutMs: number;
  maxStrikes: number;
  freeAt: (time: number) => number;
}): { answers: number[]; wedgedAt: number } {
  const answers: number[] = [];
  let now = 0;
  let strikes = 0;
  for (;;) {
    now += options.intervalMs;
    const answeredAt = options.freeAt(now);
    if (answeredAt <= now + options.timeoutMs) {
      answers.push(answeredAt);
      strikes = 0;
      now = answeredAt;
      continue;
    }
    now += options.timeoutMs;
    strikes += 1;
    if (strikes === options.maxStrikes) return { answers, wedgedAt: now };
  }
}

/** A loop that is busy (running synchronous code) during each `[start, end)` and idle otherwise. */
function busyDuring(spans: readonly (readonly [number, number])[]): (time: number) => number {
  return (time) => {
    const span = spans.find(([start, end]) => time >= start && time < end);
    return span === undefined ? time : span[1];
  };
}

/** A small deterministic generator, so a failure names the seed that reproduces it. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const hour = 3_600_000;
const alwaysFree = (time: number) => time;

describe('loop liveness schedule', () => {
  it('a healthy idle loop costs one timer per probe and the worker one look per maxStrikes windows', () => {
    const answers = tickTimes({ ...defaults, until: hour, freeAt: alwaysFree });
    expect(answers).toHaveLength(hour / defaults.intervalMs);
    const result = watch({ ...defaults, ticks: answers, until: hour });
    expect(result.wedgedAt).toBeUndefined();
    // A request/reply probe loop wakes the worker at least twice per probe: 240 times an hour.
    expect(result.checks.length).toBeLessThanOrEqual(
      hour / (3 * windowMs - defaults.intervalMs) + 1,
    );
    expect(result.checks.length).toBeGreaterThan(0);
  });

  it('reaches the verdict a full maxStrikes × (interval + timeout) after the last answer', () => {
    const lastAnswerAt = 1000;
    for (const strikesSoFar of [0, 1, 2]) {
      const now = lastAnswerAt + strikesSoFar * windowMs + 1;
      const early = checkLoopLiveness({ ...defaults, now, scheduledAt: now, lastAnswerAt });
      expect(early).toEqual({
        strikes: strikesSoFar,
        wedged: false,
        nextCheckAt: lastAnswerAt + 3 * windowMs,
      });
    }
    const due = lastAnswerAt + 3 * windowMs;
    const verdict = checkLoopLiveness({ ...defaults, now: due, scheduledAt: due, lastAnswerAt });
    expect(verdict).toEqual({ strikes: 3, wedged: true, nextCheckAt: lastAnswerAt + 4 * windowMs });
  });

  it('a worker that wakes late confirms the verdict one window later instead of trusting the count', () => {
    const lastAnswerAt = 0;
    const due = 3 * windowMs;
    // Woke within the timeout of the due time: on time, the verdict stands.
    const onTime = checkLoopLiveness({
      ...defaults,
      now: due + defaults.timeoutMs,
      scheduledAt: due,
      lastAnswerAt,
    });
    expect(onTime.wedged).toBe(true);
    // Woke later than that: the process was frozen or starved; look again one window later.
    const late = checkLoopLiveness({
      ...defaults,
      now: 5 * windowMs,
      scheduledAt: due,
      lastAnswerAt,
    });
    expect(late).toEqual({ strikes: 5, wedged: false, nextCheckAt: 6 * windowMs });
    const confirmed = checkLoopLiveness({
      ...defaults,
      now: 6 * windowMs,
      scheduledAt: 6 * windowMs,
      lastAnswerAt,
    });
    expect(confirmed.wedged).toBe(true);
  });

  it('a process frozen whole (both threads) for many windows is not wedged once it runs again', () => {
    // SIGSTOP from 100 s to 1000 s: the worker wakes at the thaw, the loop's timer runs a moment
    // later (the main thread is scheduled after the worker).
    const frozen = [100_000, 1_000_000] as const;
    const freeAt = busyDuring([[100_000, 1_000_500]]);
    const answers = tickTimes({ ...defaults, until: hour, freeAt });
    expect(answers).toContain(1_000_500);
    const result = watch({ ...defaults, ticks: answers, until: hour, frozen });
    expect(result.wedgedAt).toBeUndefined();
    // The same stall with the worker awake (the loop alone stuck) is a wedge.
    const stuck = busyDuring([[100_000, Number.POSITIVE_INFINITY]]);
    const stuckAnswers = tickTimes({ ...defaults, until: hour, freeAt: stuck });
    expect(watch({ ...defaults, ticks: stuckAnswers, until: hour }).wedgedAt).toBe(
      90_000 + 3 * windowMs,
    );
  });

  it('a late timer answers the probe whose window it falls in, and waits for the next probe between windows', () => {
    const grid = { ...defaults, lastAnswerAt: 0 };
    // On time, or late within the timeout: an answer; the next probe one interval later.
    expect(answerLoopProbe({ ...grid, now: 30_000 })).toEqual({
      answered: true,
      nextTickInMs: 30_000,
    });
    expect(answerLoopProbe({ ...grid, now: 39_999 })).toEqual({
      answered: true,
      nextTickInMs: 30_000,
    });
    // After the first miss (40 s), probe 1 goes out at 70 s: a firing at 45 s answers nothing yet.
    expect(answerLoopProbe({ ...grid, now: 45_000 })).toEqual({
      answered: false,
      nextTickInMs: 25_000,
    });
    // Inside probe 1's answer window (70–80 s): an answer.
    expect(answerLoopProbe({ ...grid, now: 75_000 })).toEqual({
      answered: true,
      nextTickInMs: 30_000,
    });
  });

  it('a blocked loop is wedged (interval + timeout) × strikes after its last answer, as with a probe loop', () => {
    for (const blockStart of [95_000, 120_000, 131_000, 3_000_007]) {
      const freeAt = busyDuring([[blockStart, Number.POSITIVE_INFINITY]]);
      const answers = tickTimes({ ...defaults, until: hour * 2, freeAt });
      const result = watch({ ...defaults, ticks: answers, until: hour * 2 });
      const reference = probeLoop({ ...defaults, freeAt });
      expect(result.strikes).toBe(3);
      expect(result.wedgedAt).toBe(reference.wedgedAt);
      expect(result.wedgedAt).toBeLessThanOrEqual(blockStart + 3 * windowMs);
      expect(result.wedgedAt).toBeGreaterThan(blockStart + 3 * windowMs - defaults.intervalMs - 1);
    }
  });

  it('gives the same answers and the same verdict as a probe loop on randomly busy loops', () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      const random = seededRandom(seed);
      const spans: [number, number][] = [];
      let time = 0;
      // Busy stretches from a few ms to past the whole verdict window, idle gaps of 0–60 s.
      while (time < hour) {
        time += Math.floor(random() * 60_000);
        const length = Math.floor(random() ** 3 * 4 * windowMs);
        spans.push([time, time + length]);
        time += length;
      }
      spans.push([time, Number.POSITIVE_INFINITY]);
      const freeAt = busyDuring(spans);
      const reference = probeLoop({ ...defaults, freeAt });
      const answers = tickTimes({ ...defaults, until: reference.wedgedAt, freeAt });
      const result = watch({ ...defaults, ticks: answers, until: reference.wedgedAt });
      expect({ seed, answers }).toEqual({ seed, answers: reference.answers });
      expect({ seed, wedgedAt: result.wedgedAt }).toEqual({ seed, wedgedAt: reference.wedgedAt });
    }
  });

  it('a loop turn inside an answer window starts the count again; one between windows does not', () => {
    // Last answer at 90 s; probe 1's answer window is 160–170 s, probe 2 goes out at 200 s.
    const turnInWindow = busyDuring([
      [100_000, 165_000],
      [165_001, Number.POSITIVE_INFINITY],
    ]);
    const answers = tickTimes({ ...defaults, until: hour, freeAt: turnInWindow });
    expect(answers.at(-1)).toBe(165_000);
    const result = watch({ ...defaults, ticks: answers, until: hour });
    expect(result.wedgedAt).toBe(165_000 + 3 * windowMs);
    expect(result.wedgedAt).toBe(probeLoop({ ...defaults, freeAt: turnInWindow }).wedgedAt);

    const turnBetweenWindows = busyDuring([
      [100_000, 190_000],
      [190_001, Number.POSITIVE_INFINITY],
    ]);
    const late = tickTimes({ ...defaults, until: hour, freeAt: turnBetweenWindows });
    expect(late.at(-1)).toBe(90_000);
    const lateResult = watch({ ...defaults, ticks: late, until: hour });
    expect(lateResult.wedgedAt).toBe(90_000 + 3 * windowMs);
    expect(lateResult.wedgedAt).toBe(
      probeLoop({ ...defaults, freeAt: turnBetweenWindows }).wedgedAt,
    );
  });

  it('with default options a loop wedged from arming is judged 3 × (30 + 10) = 120 s after arming, as the reference', () => {
    // The options a gateway gets from an empty config.yaml: no startup grace among them.
    const options = {
      intervalMs: DEFAULT_LOOP_WATCHDOG_INTERVAL_S * 1000,
      timeoutMs: DEFAULT_LOOP_WATCHDOG_TIMEOUT_S * 1000,
      maxStrikes: DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
    };
    const watchFrom = loopWatchStartsAt(0);
    expect(watchFrom).toBe(0);
    const wedgedFromArming = busyDuring([[0, Number.POSITIVE_INFINITY]]);
    const answers = tickTimes({ ...options, watchFrom, until: hour, freeAt: wedgedFromArming });
    expect(answers).toEqual([]);
    const result = watch({ ...options, watchFrom, ticks: answers, until: hour });
    expect(result.wedgedAt).toBe(120_000);
    expect(result.wedgedAt).toBe(probeLoop({ ...options, freeAt: wedgedFromArming }).wedgedAt);
    // The worker's one look before the verdict is the verdict itself.
    expect(result.checks).toEqual([120_000]);
    // Not a moment earlier: one millisecond before, two windows and a bit have passed.
    expect(
      checkLoopLiveness({ ...options, now: 119_999, scheduledAt: 119_999, lastAnswerAt: 0 }).wedged,
    ).toBe(false);

    // A loop that answered the first probe (30 s) and then wedged: 30 + 120 s, as a probe loop.
    const wedgedAfterFirstProbe = busyDuring([[30_001, Number.POSITIVE_INFINITY]]);
    const later = tickTimes({ ...options, watchFrom, until: hour, freeAt: wedgedAfterFirstProbe });
    expect(later).toEqual([30_000]);
    expect(watch({ ...options, watchFrom, ticks: later, until: hour }).wedgedAt).toBe(150_000);
    expect(probeLoop({ ...options, freeAt: wedgedAfterFirstProbe }).wedgedAt).toBe(150_000);
  });

  it('an explicit startup grace moves the first verdict by the grace and nothing else', () => {
    const options = { ...defaults };
    const watchFrom = loopWatchStartsAt(0, 60);
    const wedgedFromArming = busyDuring([[0, Number.POSITIVE_INFINITY]]);
    const answers = tickTimes({ ...options, watchFrom, until: hour, freeAt: wedgedFromArming });
    expect(watch({ ...options, watchFrom, ticks: answers, until: hour }).wedgedAt).toBe(180_000);
    // A healthy loop inside the grace answers normally: its first probe at 30 s.
    expect(tickTimes({ ...options, watchFrom, until: 100_000, freeAt: alwaysFree })).toEqual([
      30_000, 60_000, 90_000,
    ]);
  });

  it('the worker runs this very function', () => {
    expect(LOOP_WATCHDOG_WORKER_SOURCE).toContain(checkLoopLiveness.toString());
  });
});
