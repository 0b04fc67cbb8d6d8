/**
 * The startup restore gate (reference §5.2): while boot work (obligation redelivery, resumed
 * turns) runs, inbound messages wait here, in arrival order; `open()` replays them and lets every
 * later one through at once. The gate is opened exactly once, whatever happened during boot.
 */
export class RestoreGate {
  readonly #queued: (() => void)[] = [];
  #open = false;
  readonly #onQueued: ((label: string) => void) | undefined;

  constructor(options: { onQueued?: (label: string) => void } = {}) {
    this.#onQueued = options.onQueued;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  get waiting(): number {
    return this.#queued.length;
  }

  /** Runs `work` now when open, else after `open()`. */
  submit(label: string, work: () => void): void {
    if (this.#open) {
      work();
      return;
    }
    this.#onQueued?.(label);
    this.#queued.push(work);
  }

  open(): number {
    if (this.#open) return 0;
    this.#open = true;
    const replay = this.#queued.splice(0);
    for (const work of replay) work();
    return replay.length;
  }
}

/**
 * Waits for `tasks` at most `timeoutS` (≤ 0: for all of them) and never cancels them: a task still
 * running when the time is up goes on in the background. Resolves with how many were still running.
 */
export async function waitBounded(
  tasks: readonly Promise<unknown>[],
  timeoutS: number,
): Promise<number> {
  let settled = 0;
  const all = Promise.all(
    tasks.map((task) =>
      task.then(
        () => {
          settled += 1;
        },
        () => {
          settled += 1;
        },
      ),
    ),
  );
  if (!(timeoutS > 0)) {
    await all;
    return 0;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    all,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutS * 1000);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
  return tasks.length - settled;
}
