/**
 * A FIFO async mutex: `lock()` resolves, in call order, to a release function. It stands in for
 * the reference's per-controller send lock: command writes, cancel writes, detach, disconnect and
 * reconnect flushes for one controller run one at a time, in arrival order.
 */
export class AsyncMutex {
  #tail: Promise<void> = Promise.resolve();
  #holders = 0;

  /** True while someone holds or waits for the lock (diagnostics). */
  get busy(): boolean {
    return this.#holders > 0;
  }

  lock(): Promise<() => void> {
    this.#holders += 1;
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.#tail.then(() => {
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.#holders -= 1;
        release();
      };
    });
    this.#tail = this.#tail.then(() => next);
    return acquired;
  }

  /** Runs `task` while holding the lock and releases it however the task ends. */
  async run<T>(task: () => Promise<T> | T): Promise<T> {
    const release = await this.lock();
    try {
      return await task();
    } finally {
      release();
    }
  }
}
