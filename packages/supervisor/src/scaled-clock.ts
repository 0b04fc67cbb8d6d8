import { performance } from 'node:perf_hooks';
import { type SupervisorClock, unrefSleep } from './clock.js';

/**
 * A monotonic clock whose time runs `1 / scale` times faster: with `scale` 0.01 a 30 s backoff
 * passes in 0.3 s and a 300 s "healthy run" in 3 s. Every schedule of the supervisors keeps its
 * shape, so a test (or a demo) can watch minutes of supervision in seconds. `scale` 1 is the
 * system clock.
 */
export function scaledClock(scale: number): SupervisorClock {
  if (!(scale > 0) || !Number.isFinite(scale))
    throw new RangeError(`time scale must be a positive number, got ${scale}`);
  const origin = performance.now();
  return {
    now: () => origin + (performance.now() - origin) / scale,
    sleep: (ms, signal) => unrefSleep(ms * scale, signal),
  };
}
