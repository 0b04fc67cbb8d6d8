/**
 * Layout of the `SharedArrayBuffer` shared by the main thread and the watchdog worker. The worker
 * must be able to read the stop flag and the loop's latest tick even while the main thread is
 * wedged, so these live in shared memory rather than in messages.
 */
export const SHARED_INT_SLOTS = {
  /** Strikes as the worker last counted them (the main thread's `strikes` getter reads it). */
  strikes: 0,
  /** 1 once `stop()` has begun: every irreversible step re-checks it. */
  stopped: 1,
  /** Reports the main thread has written (so the worker knows its request was served). */
  mainReports: 2,
} as const;
export const SHARED_INT_COUNT = 4;
/** Bytes of the int slots (one spare keeps the next region 8-byte aligned). */
export const SHARED_INT_BYTES = SHARED_INT_COUNT * 4;

/**
 * The main loop's latest tick, in nanoseconds of `process.hrtime.bigint()` — the one monotonic
 * clock both threads read alike (`performance.now()` has a different origin in every thread).
 */
export const SHARED_TICK_OFFSET = SHARED_INT_BYTES;
export const SHARED_TICK_BYTES = 8;

/**
 * Event-loop delay sample count and figures (ms) as last published by the main thread, for the
 * worker's report.
 */
export const SHARED_DELAY_SLOTS = { samples: 0, p50: 1, p90: 2, p99: 3, max: 4, mean: 5 } as const;
export const SHARED_DELAY_COUNT = 6;
export const SHARED_DELAY_OFFSET = SHARED_TICK_OFFSET + SHARED_TICK_BYTES;

export const SHARED_BYTES = SHARED_DELAY_OFFSET + SHARED_DELAY_COUNT * 8;

/** Where the main thread registers its fire function so the inspector evaluation can find it. */
export const FIRE_REGISTRY_KEY = '@hermes/supervisor.loop-watchdog';
