import { describe, expect, it } from 'vitest';
import { AsyncMutex } from './async-mutex.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('AsyncMutex', () => {
  it('admits holders one at a time in call order', async () => {
    const mutex = new AsyncMutex();
    const events: string[] = [];
    const work = (name: string) =>
      mutex.run(async () => {
        events.push(`${name}:start`);
        await tick();
        events.push(`${name}:end`);
      });
    await Promise.all([work('a'), work('b'), work('c')]);
    expect(events).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
  });

  it('releases the lock when the task throws', async () => {
    const mutex = new AsyncMutex();
    await expect(
      mutex.run(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(mutex.run(() => 'next')).resolves.toBe('next');
    expect(mutex.busy).toBe(false);
  });

  it('ignores a second release of the same hold', async () => {
    const mutex = new AsyncMutex();
    const release = await mutex.lock();
    const second = mutex.lock();
    release();
    release();
    const releaseSecond = await second;
    let thirdAcquired = false;
    const third = mutex.lock().then((releaseThird) => {
      thirdAcquired = true;
      releaseThird();
    });
    await tick();
    expect(thirdAcquired).toBe(false);
    releaseSecond();
    await third;
    expect(thirdAcquired).toBe(true);
  });
});
