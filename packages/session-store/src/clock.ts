/** Time sources, injectable so tests can collapse schedules. */
export interface Clock {
  /** Wall-clock epoch seconds, stored in rows and shown to people. */
  now(): number;
  /** Monotonic milliseconds for deadlines, cooldowns and TTLs. */
  monotonicMs(): number;
}

export const systemClock: Clock = {
  now: () => Date.now() / 1000,
  monotonicMs: () => performance.now(),
};

export type Sleep = (milliseconds: number) => Promise<void>;

export const realSleep: Sleep = (milliseconds) =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));
