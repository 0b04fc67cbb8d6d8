import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Sampling period of the event-loop delay histogram behind `status` (ms). */
export const LOOP_DELAY_RESOLUTION_MS = 20;
/** The histogram is reset this often, so p99 describes the recent past, not the whole uptime. */
export const LOOP_DELAY_WINDOW_MS = 60_000;

/** Event-loop delay over a rolling window (the previous full window while a new one fills). */
export function startLoopDelayMonitor() {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  let last = { p99Ms: 0, maxMs: 0, samples: 0 };
  const timer = setInterval(() => {
    last = snapshot();
    histogram.reset();
  }, LOOP_DELAY_WINDOW_MS);
  timer.unref();
  const snapshot = () => ({
    p99Ms: histogram.count > 0 ? Math.round((histogram.percentile(99) / 1e6) * 100) / 100 : 0,
    maxMs: histogram.count > 0 ? Math.round((histogram.max / 1e6) * 100) / 100 : 0,
    samples: histogram.count,
  });
  return {
    /** The worse of the current and the previous window, so a fresh window never hides a stall. */
    read() {
      const current = snapshot();
      return {
        p99Ms: Math.max(current.p99Ms, last.p99Ms),
        maxMs: Math.max(current.maxMs, last.maxMs),
        samples: current.samples + last.samples,
      };
    },
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
