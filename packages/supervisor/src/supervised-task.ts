import { type SupervisorClock, type SupervisorLogger, stderrLogger, systemClock } from './clock.js';
import {
  MAX_SUPERVISED_RESTARTS,
  messages,
  SUPERVISED_BACKOFF_CAP_S,
  SUPERVISED_HEALTHY_S,
} from './constants.js';
import { emptyContextIsolationWorks, runInEmptyContext } from './empty-context.js';

let isolationWarningGiven = false;

/** Seconds to wait before respawn number `attempt + 1`: 1, 2, 4, 8, 16, 32, 60, 60 … */
export function supervisedBackoffS(attempt: number): number {
  return Math.min(SUPERVISED_BACKOFF_CAP_S, 2 ** Math.min(Math.max(0, attempt), 6));
}

export type SupervisedFactory = (signal: AbortSignal) => Promise<void> | void;

/**
 * Where a lifetime stands: `running`; `restarting` (crashed, respawn pending); `returned` (clean
 * return); `aborted`; `gave-up` (too many rapid crashes); `ended` (crashed with no respawn: restart
 * off, or the owner stopped).
 */
export type SupervisedTaskState =
  | 'running'
  | 'restarting'
  | 'returned'
  | 'aborted'
  | 'gave-up'
  | 'ended';

export interface SupervisedTask {
  readonly name: string;
  /** 0 for the first lifetime, then 1, 2 … within one chain of rapid restarts. */
  readonly attempt: number;
  /** Settles when this lifetime ends (never rejects). */
  readonly finished: Promise<void>;
  readonly done: boolean;
  readonly state: SupervisedTaskState;
  /**
   * Cancels this lifetime, or — after a crash, while the respawn waits out its backoff
   * (`restarting`) — the pending respawn: an aborted task is never restarted.
   */
  abort(): void;
}

export interface SpawnSupervisedOptions {
  readonly name: string;
  /** Restart after a crash (default true). A clean return never restarts. */
  readonly restart?: boolean;
  /** Sees every new task, respawns included, synchronously at spawn. Errors are swallowed. */
  readonly onSpawn?: (task: SupervisedTask) => void;
  /** Called once when supervision abandons the task after too many rapid crashes. */
  readonly onGiveUp?: (name: string) => void;
  /** Whether the owner still runs; checked before every restart (default always). */
  readonly isRunning?: () => boolean;
  /** Aborting it cancels the running task and any pending restart. */
  readonly signal?: AbortSignal;
  readonly clock?: SupervisorClock;
  /** Seconds of backoff before respawn `attempt + 1` (default {@link supervisedBackoffS}). */
  readonly backoffS?: (attempt: number) => number;
  readonly logger?: SupervisorLogger;
  /** Background-task set: each live task is in it until it ends. */
  readonly tasks?: Set<SupervisedTask>;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}(${JSON.stringify(error.message)})`;
  return String(error);
}

/**
 * Starts `factory` as a supervised task: a crash restarts it with backoff min(60, 2^n) s, up to 5
 * rapid restarts (a run lasting 300 s resets the count); a clean return or an abort never
 * restarts. `onSpawn` and `onGiveUp` are carried to every respawn.
 */
export function spawnSupervised(
  factory: SupervisedFactory,
  options: SpawnSupervisedOptions,
): SupervisedTask {
  return spawnAttempt(factory, options, 0);
}

function spawnAttempt(
  factory: SupervisedFactory,
  options: SpawnSupervisedOptions,
  attempt: number,
): SupervisedTask {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  if (!isolationWarningGiven && !emptyContextIsolationWorks()) {
    isolationWarningGiven = true;
    logger.warn(messages.supervisedContextNotIsolated);
  }
  // An owner that has already stopped gets a settled, aborted handle: the factory never runs.
  // (An 'abort' listener added to an aborted signal never fires, so this must be checked here.)
  if (options.signal?.aborted) return abortedBeforeStart(options.name, attempt, options.onSpawn);
  const startedAt = clock.now();
  const controller = new AbortController();
  const onOwnerAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onOwnerAbort, { once: true });

  let done = false;
  let state: SupervisedTaskState = 'running';
  let task: SupervisedTask;

  const scheduleRestart = () => {
    const isRunning = options.isRunning ?? (() => true);
    if (options.restart === false || !isRunning() || options.signal?.aborted) {
      state = 'ended';
      return;
    }
    const healthy = clock.now() - startedAt >= SUPERVISED_HEALTHY_S * 1000;
    const effective = healthy ? 0 : attempt;
    if (effective >= MAX_SUPERVISED_RESTARTS) {
      state = 'gave-up';
      logger.error(messages.supervisedGaveUp(options.name, effective + 1, SUPERVISED_HEALTHY_S));
      try {
        options.onGiveUp?.(options.name);
      } catch (error) {
        logger.error(`on_give_up hook for ${options.name} failed: ${describeError(error)}`, error);
      }
      return;
    }
    state = 'restarting';
    const backoffMs = (options.backoffS ?? supervisedBackoffS)(effective) * 1000;
    // This lifetime's abort() and the owner's signal both cancel the pending respawn: the sleep
    // ends at once and nothing is spawned.
    const cancelled =
      options.signal === undefined
        ? controller.signal
        : AbortSignal.any([controller.signal, options.signal]);
    // Kept alive by the promise chain itself; the timer is unref'd so it never holds the process.
    void clock.sleep(backoffMs, cancelled).then(() => {
      if (cancelled.aborted) {
        state = 'aborted';
        return;
      }
      if (!isRunning()) {
        state = 'ended';
        return;
      }
      spawnAttempt(factory, options, effective + 1);
    });
  };

  // Everything from here on — the factory, the crash handling, the backoff timer and the respawn —
  // runs in a fresh, empty async context: no store of the spawner (a profile home override, a
  // delegated-child marker, a request scope) leaks into the task.
  const finished = runInEmptyContext(() =>
    new Promise<void>((resolve) => resolve(factory(controller.signal)))
      .then(
        () => {
          state = controller.signal.aborted ? 'aborted' : 'returned';
        },
        (error: unknown) => {
          if (controller.signal.aborted) {
            state = 'aborted';
            return;
          }
          logger.error(messages.supervisedTaskDied(options.name, describeError(error)), error);
          scheduleRestart();
        },
      )
      .finally(() => {
        done = true;
        options.tasks?.delete(task);
        options.signal?.removeEventListener('abort', onOwnerAbort);
      }),
  );

  task = {
    name: options.name,
    attempt,
    finished,
    get done() {
      return done;
    },
    get state() {
      return state;
    },
    abort: () => {
      controller.abort();
      if (state === 'restarting') state = 'aborted';
    },
  };
  options.tasks?.add(task);
  try {
    options.onSpawn?.(task);
  } catch {
    // An observer must not break supervision.
  }
  return task;
}

function abortedBeforeStart(
  name: string,
  attempt: number,
  onSpawn: ((task: SupervisedTask) => void) | undefined,
): SupervisedTask {
  const task: SupervisedTask = {
    name,
    attempt,
    finished: Promise.resolve(),
    done: true,
    state: 'aborted',
    abort: () => {},
  };
  try {
    onSpawn?.(task);
  } catch {
    // An observer must not break supervision.
  }
  return task;
}
