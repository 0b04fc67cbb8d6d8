import { randomBytes } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { FileAppender } from './file-appender.js';

async function openTarget() {
  const home = await tempHome('hermes-appender-');
  const filePath = path.join(home.path, 'target.bin');
  return { filePath, handle: await open(filePath, 'wx', 0o600) };
}

describe('FileAppender', () => {
  it('writes every chunk in order while appends keep arriving', async () => {
    const { filePath, handle } = await openTarget();
    const chunks = Array.from({ length: 40 }, (_, index) => randomBytes(1000 + index * 97));
    const appender = new FileAppender(handle, { highWaterBytes: 8 * 1024 });
    for (const chunk of chunks) await appender.append(chunk);
    await appender.flush();
    await handle.close();
    expect((await readFile(filePath)).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('holds the caller back once more than the high-water mark is queued', async () => {
    const { handle } = await openTarget();
    const appender = new FileAppender(handle, { highWaterBytes: 4 });
    let settled = false;
    const pending = appender.append(new Uint8Array(8)).then(() => {
      settled = true;
    });
    // A queue past its mark resolves only after a write on the thread pool, never synchronously.
    await Promise.resolve();
    expect(settled).toBe(false);
    await pending;
    expect(settled).toBe(true);
    await appender.flush();
    await handle.close();
  });

  it('reports a failed write to the next append and to flush', async () => {
    const { handle } = await openTarget();
    const appender = new FileAppender(handle);
    await handle.close();
    await appender.append(new Uint8Array(16)).catch(() => {});
    await appender.settle();
    await expect(appender.append(new Uint8Array(16))).rejects.toMatchObject({ code: 'EBADF' });
    await expect(appender.flush()).rejects.toMatchObject({ code: 'EBADF' });
  });
});
