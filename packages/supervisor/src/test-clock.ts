import type { SupervisorClock, SupervisorLogger } from './clock.js';

/**
 * A manual clock for tests of schedules: `sleep` records the request, advances `now` by it and
 * resolves on the next macrotask, so a backoff schedule of minutes collapses to microseconds while
 * the order of events stays real.
 */
export interface ManualClock extends SupervisorClock {
  readonly sleeps: number[];
  advance(ms: number): void;
  /** Runs at the start of every sleep (e.g. to change the world while a timer waits). */
  onSleep: ((ms: number) => void) | undefined;
}

export function createManualClock(): ManualClock {
  let current = 0;
  const sleeps: number[] = [];
  const clock: ManualClock = {
    sleeps,
    onSleep: undefined,
    now: () => current,
    advance(ms) {
      current += ms;
    },
    sleep(ms) {
      sleeps.push(ms);
      clock.onSleep?.(ms);
      current += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
  return clock;
}

export interface RecordingLogger extends SupervisorLogger {
  readonly lines: { level: 'info' | 'warn' | 'error'; message: string }[];
}

export function createRecordingLogger(): RecordingLogger {
  const lines: RecordingLogger['lines'] = [];
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
  };
}

/** Waits until `condition` holds, turning the event loop between checks. */
export async function until(condition: () => boolean, limit = 10_000): Promise<void> {
  for (let turn = 0; turn < limit; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
}
