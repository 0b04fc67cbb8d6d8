import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

export interface TempHome {
  /** Absolute path of a fresh, empty HERMES_HOME. */
  readonly path: string;
  /** Removes the folder and everything in it (idempotent). */
  remove(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a fresh HERMES_HOME in the temp folder. Inside a test it is removed when the test
 * finishes; elsewhere (hooks, benchmarks) the caller calls `remove()`. Paths stay short so Unix
 * socket paths inside the home fit the platform limit.
 */
export async function tempHome(prefix = 'hermes-home-'): Promise<TempHome> {
  const home = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(home, 0o700);
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a running test: the caller owns cleanup.
  }
  return { path: home, remove, [Symbol.asyncDispose]: remove };
}
