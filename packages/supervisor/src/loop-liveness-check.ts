/**
 * The loop watchdog's schedule, as two pure functions so it can be tested on a fake clock — one for
 * each side. The worker runs `checkLoopLiveness` from its compiled source (embedded with
 * `Function.prototype.toString`), so that function must stay self-contained: no imports, no
 * helpers, no nested functions.
 *
 * Why not a request/reply probe: every thread wake-up costs CPU, and on a virtual machine a wake-up
 * costs a lot. A worker that sends a probe and waits for the reply wakes itself twice and the main
 * loop once per probe. Here the main loop answers a probe grid it can compute itself, from an
 * unref'd timer (one wake-up per probe, the one a probe message would cause), and stamps each answer
 * into shared memory; the worker reads the stamp only when a verdict could be due.
 *
 * The grid is the reference probe loop's: after an answer at `L`, probe k goes out at
 * `L + k × (interval + timeout) + interval` and must be answered within `timeout`; each unanswered
 * probe is a strike; `maxStrikes` in a row ⇒ wedged. The main loop's timer fires at a probe time,
 * or later if the loop was busy; a late firing answers the probe whose answer window it falls in,
 * and one that falls between a miss and the next probe answers nothing (a probe loop would not
 * count it either: that probe was not sent yet) — the timer waits for the next probe time instead.
 * So the answers, and the moment of the verdict, are the ones a probe loop would see.
 */

import { DEFAULT_LOOP_WATCHDOG_STARTUP_GRACE_S } from './constants.js';

/**
 * Where the watch begins, on the clock of `armedAtMs`: the moment of arming plus the startup grace
 * (default 0, as the reference). The main loop's grid and the worker's verdicts both count from it.
 */
export function loopWatchStartsAt(
  armedAtMs: number,
  startupGraceS: number = DEFAULT_LOOP_WATCHDOG_STARTUP_GRACE_S,
): number {
  return armedAtMs + startupGraceS * 1000;
}

export interface LoopProbeGridInput {
  /** Monotonic ms now. */
  readonly now: number;
  /**
   * Monotonic ms of the loop's last answer (same clock as `now`), or the moment watching began if
   * that is later: the grid's origin.
   */
  readonly lastAnswerAt: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

export interface LoopTickDecision {
  /** The loop's timer fired inside an answer window (or before any strike): it answers. */
  readonly answered: boolean;
  /** When the main loop's timer should fire next, from now. */
  readonly nextTickInMs: number;
}

/** Main thread: does a timer firing now answer a probe, and when is the next probe? */
export function answerLoopProbe(input: LoopProbeGridInput): LoopTickDecision {
  const windowMs = input.intervalMs + input.timeoutMs;
  const missedWindows = Math.floor((input.now - input.lastAnswerAt) / windowMs);
  // No window missed yet: the timer was armed for the next probe time (it may fire a hair early).
  if (missedWindows <= 0) return { answered: true, nextTickInMs: input.intervalMs };
  const probeAt = input.lastAnswerAt + missedWindows * windowMs + input.intervalMs;
  if (input.now >= probeAt) return { answered: true, nextTickInMs: input.intervalMs };
  return { answered: false, nextTickInMs: probeAt - input.now };
}

export interface LoopLivenessCheckInput extends LoopProbeGridInput {
  readonly maxStrikes: number;
  /** When the worker meant to look (the previous `nextCheckAt`); `now` when it woke on time. */
  readonly scheduledAt: number;
}

export interface LoopLivenessCheck {
  /** Whole windows of `interval + timeout` without an answer since `lastAnswerAt`. */
  readonly strikes: number;
  /** `strikes ≥ maxStrikes`, seen by a worker that woke on time. */
  readonly wedged: boolean;
  /**
   * When to look again: the moment the verdict falls if no answer comes; once wedged, or when the
   * verdict waits for confirmation, one window later.
   */
  readonly nextCheckAt: number;
}

/**
 * Worker: strikes so far. Strikes need no one watching as they happen — any later answer cancels
 * them — so the worker sleeps straight to `lastAnswerAt + maxStrikes × (interval + timeout)`: one
 * wake-up per `maxStrikes` windows while the loop is healthy, and the verdict at the same moment as
 * a probe loop's.
 *
 * One guard a probe loop gets for free: its strikes need the worker running, so a process that was
 * frozen whole (SIGSTOP, a paused container, a starved machine) costs it at most one strike. A
 * worker that wakes more than `timeout` after it meant to was frozen or starved itself; its count
 * of windows says nothing about the loop, so the verdict waits one more window, in which a loop
 * that runs again answers.
 */
export function checkLoopLiveness(input: LoopLivenessCheckInput): LoopLivenessCheck {
  const windowMs = input.intervalMs + input.timeoutMs;
  const strikes = Math.max(0, Math.floor((input.now - input.lastAnswerAt) / windowMs));
  if (strikes < input.maxStrikes) {
    return {
      strikes,
      wedged: false,
      nextCheckAt: input.lastAnswerAt + input.maxStrikes * windowMs,
    };
  }
  const overslept = input.now - input.scheduledAt > input.timeoutMs;
  return { strikes, wedged: !overslept, nextCheckAt: input.now + windowMs };
}
