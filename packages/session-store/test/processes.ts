import path from 'node:path';
import { type SpawnedProcess, spawnProcess } from '@hermes/testkit';

const packageRoot = path.join(import.meta.dirname, '..');

export interface RunFixtureOptions {
  /**
   * RLIMIT_FSIZE for the child (`ulimit -f`, in the shell's blocks of 512 or 1024 bytes): a write
   * that would grow a file past it fails with EFBIG — a real write failure, midway through.
   */
  readonly fileSizeLimitBlocks?: number;
}

/** Runs a TypeScript fixture in a real child process, resolving workspace sources. */
export function runFixture(
  name: string,
  args: readonly string[],
  readyLine?: string,
  options: RunFixtureOptions = {},
): Promise<SpawnedProcess> {
  const node = [
    process.execPath,
    '--conditions=@hermes/source',
    '--import',
    'tsx',
    path.join(packageRoot, 'test/fixtures', name),
    ...args,
  ];
  const limited = options.fileSizeLimitBlocks !== undefined;
  return spawnProcess({
    command: limited ? '/bin/sh' : (node[0] as string),
    args: limited
      ? ['-c', 'ulimit -f "$0" && exec "$@"', String(options.fileSizeLimitBlocks), ...node]
      : node.slice(1),
    cwd: packageRoot,
    ...(readyLine === undefined ? {} : { readyLine, readyTimeoutMs: 30_000 }),
  });
}
