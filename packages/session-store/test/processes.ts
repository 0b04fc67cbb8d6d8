import path from 'node:path';
import { type SpawnedProcess, spawnProcess } from '@hermes/testkit';

const packageRoot = path.join(import.meta.dirname, '..');

/** Runs a TypeScript fixture in a real child process, resolving workspace sources. */
export function runFixture(
  name: string,
  args: readonly string[],
  readyLine?: string,
): Promise<SpawnedProcess> {
  return spawnProcess({
    command: process.execPath,
    args: [
      '--conditions=@hermes/source',
      '--import',
      'tsx',
      path.join(packageRoot, 'test/fixtures', name),
      ...args,
    ],
    cwd: packageRoot,
    ...(readyLine === undefined ? {} : { readyLine, readyTimeoutMs: 30_000 }),
  });
}
