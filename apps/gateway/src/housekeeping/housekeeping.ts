import type { Logger } from 'pino';

/** One housekeeping job: runs on every `everyTicks`-th tick (the first tick is 1). */
export interface HousekeepingJob {
  readonly name: string;
  readonly everyTicks: number;
  run(signal: AbortSignal): Promise<unknown>;
}

export interface Housekeeping {
  /** Ticks completed so far. */
  readonly ticks: number;
  /** Stops the loop: cancels the wait, signals the running job, resolves once it returned. */
  stop(): Promise<void>;
}

/**
 * The gateway housekeeping loop (reference §7) as a timer-driven async loop on the main thread:
 * every job is asynchronous (file work through `fs.promises`, database work through the store's
 * writer or a worker), ticks never overlap (the next wait starts when a tick's jobs are done), a
 * failing job is logged and never stops the loop, and `stop()` cancels the wait at once.
 */
export function startHousekeeping(options: {
  readonly intervalMs: number;
  readonly jobs: readonly HousekeepingJob[];
  readonly logger: Logger;
}): Housekeeping {
  const { logger, jobs } = options;
  const controller = new AbortController();
  let ticks = 0;
  const wait = () =>
    new Promise<void>((resolve) => {
      if (controller.signal.aborted) return resolve();
      const timer = setTimeout(done, options.intervalMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        controller.signal.removeEventListener('abort', done);
        resolve();
      }
      controller.signal.addEventListener('abort', done, { once: true });
    });
  logger.info(`Gateway housekeeping started (interval=${options.intervalMs / 1000}s)`);
  const loop = (async () => {
    while (!controller.signal.aborted) {
      await wait();
      if (controller.signal.aborted) break;
      const tick = ticks + 1;
      for (const job of jobs) {
        if (controller.signal.aborted) break;
        if (tick % job.everyTicks !== 0) continue;
        try {
          const result = await job.run(controller.signal);
          if (typeof result === 'number' && result > 0)
            logger.info({ job: job.name, removed: result }, `${job.name}: ${result}`);
        } catch (error) {
          logger.debug({ err: error, job: job.name }, 'housekeeping job failed');
        }
      }
      ticks = tick;
    }
    logger.info('Gateway housekeeping stopped');
  })();
  return {
    get ticks() {
      return ticks;
    },
    async stop() {
      controller.abort();
      await loop;
    },
  };
}
