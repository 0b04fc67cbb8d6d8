import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  type ConnectOptions,
  connectWithTimeout,
  type PlatformAdapter,
  type SendResult,
} from './platform-adapter.js';

/** An adapter that records its connects and connects after `delayMs` unless told to give up. */
class RecordingAdapter implements PlatformAdapter {
  readonly platform = 'telegram';
  readonly fatalError = undefined;
  readonly connects: ConnectOptions[] = [];
  constructor(readonly delayMs = 0) {}
  async connect(options: ConnectOptions): Promise<boolean> {
    this.connects.push(options);
    await new Promise((resolve) => setTimeout(resolve, this.delayMs).unref());
    return true;
  }
  async disconnect() {}
  async send(): Promise<SendResult> {
    return { success: true };
  }
}

describe('connectWithTimeout', () => {
  it.each([30, 0])(
    'rejects at once with the reason of an already-aborted signal and never calls connect (timeoutS %s)',
    async (timeoutS) => {
      const adapter = new RecordingAdapter();
      const reason = new Error('gateway stopping');
      const owner = new AbortController();
      owner.abort(reason);
      await expect(
        connectWithTimeout(adapter, { isReconnect: false, timeoutS, signal: owner.signal }),
      ).rejects.toBe(reason);
      expect(adapter.connects).toEqual([]);
    },
  );

  it('rejects with the default AbortError when the signal was aborted without a reason', async () => {
    const adapter = new RecordingAdapter();
    await expect(
      connectWithTimeout(adapter, { isReconnect: true, timeoutS: 30, signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(adapter.connects).toEqual([]);
  });

  it('rejects at once with the reason when the signal aborts during a connect that ignores it, and aborts the connect', async () => {
    const adapter = new RecordingAdapter(10_000);
    const owner = new AbortController();
    const reason = new Error('gateway stopping');
    const connecting = connectWithTimeout(adapter, {
      isReconnect: false,
      timeoutS: 0,
      signal: owner.signal,
    });
    const started = performance.now();
    owner.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(adapter.connects[0]?.signal.aborted).toBe(true);
    expect(adapter.connects[0]?.signal.reason).toBe(reason);
  });

  it('connects with a live signal and passes isReconnect through', async () => {
    const adapter = new RecordingAdapter(5);
    const owner = new AbortController();
    expect(
      await connectWithTimeout(adapter, { isReconnect: true, timeoutS: 30, signal: owner.signal }),
    ).toBe(true);
    expect(adapter.connects.map((options) => options.isReconnect)).toEqual([true]);
  });

  it('leaves no listener on the long-lived signal when connect throws synchronously or settles', async () => {
    const owner = new AbortController();
    const failure = new Error('bad token');
    const throwing: PlatformAdapter = {
      platform: 'telegram',
      fatalError: undefined,
      connect() {
        throw failure;
      },
      async disconnect() {},
      async send() {
        return { success: true };
      },
    };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expect(
        connectWithTimeout(throwing, { isReconnect: true, timeoutS: 30, signal: owner.signal }),
      ).rejects.toBe(failure);
    }
    await connectWithTimeout(new RecordingAdapter(), {
      isReconnect: false,
      timeoutS: 30,
      signal: owner.signal,
    });
    expect(getEventListeners(owner.signal, 'abort')).toHaveLength(0);
  });
});
