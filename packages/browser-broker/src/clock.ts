/** Seconds on a monotonic clock. Deadlines and TTLs use this; wall-clock time is for display only. */
export type MonotonicClock = () => number;

export const monotonicSeconds: MonotonicClock = () => performance.now() / 1000;
