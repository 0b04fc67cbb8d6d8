import { execFile } from 'node:child_process';
import {
  cp,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repositoryRoot = path.resolve(packageRoot, '..', '..');

interface PackageJson {
  name: string;
  files?: string[];
  dependencies?: Record<string, string>;
}

const readPackageJson = async (root: string) =>
  JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as PackageJson;

const scratch = await mkdtemp(path.join(tmpdir(), 'browser-broker-consumer-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/**
 * Installs `root` into the scratch project as a consumer gets it from its tarball: only the
 * shipped files, and only its `dependencies` (workspace ones installed the same way, third-party
 * ones linked from where pnpm put them). Nothing from devDependencies is reachable.
 */
async function install(root: string, seen = new Set<string>()): Promise<void> {
  const manifest = await readPackageJson(root);
  if (seen.has(manifest.name)) return;
  seen.add(manifest.name);
  const target = path.join(scratch, 'node_modules', manifest.name);
  await mkdir(target, { recursive: true });
  await cp(path.join(root, 'package.json'), path.join(target, 'package.json'));
  for (const entry of manifest.files ?? []) {
    const source = path.join(root, entry);
    const exists = await stat(source).then(
      () => true,
      () => false,
    );
    if (exists) await cp(source, path.join(target, entry), { recursive: true });
  }
  for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
    const resolved = await realpath(path.join(root, 'node_modules', name));
    if (range.startsWith('workspace:')) {
      await install(resolved, seen);
      continue;
    }
    const link = path.join(scratch, 'node_modules', name);
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(resolved, link, 'dir').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}

describe('published types', () => {
  it('type-check in a strict consumer without skipLibCheck, from the shipped files and dependencies alone', {
    timeout: 120_000,
  }, async () => {
    const built = await stat(path.join(packageRoot, 'dist', 'index.d.ts')).then(
      () => true,
      () => false,
    );
    expect(built, 'dist/ is missing: run `pnpm --filter @hermes/browser-broker build`').toBe(true);
    await install(packageRoot);
    // The consumer's own devDependency, as in any TypeScript project for Node.
    await mkdir(path.join(scratch, 'node_modules', '@types'), { recursive: true });
    await symlink(
      await realpath(path.join(repositoryRoot, 'node_modules', '@types', 'node')),
      path.join(scratch, 'node_modules', '@types', 'node'),
      'dir',
    );
    await writeFile(
      path.join(scratch, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await writeFile(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          noEmit: true,
          skipLibCheck: false,
          // A Node project brings its own Node types and nothing else ambient: every other
          // type must arrive through the package's imports.
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    await writeFile(
      path.join(scratch, 'consumer.ts'),
      [
        "import { BrowserControlBroker, createWebSocketSender, serveControllerConnection, type ControllerConnection } from '@hermes/browser-broker';",
        "import { BrowserControllerClient } from '@hermes/browser-broker/client';",
        'export const broker = new BrowserControlBroker();',
        'export type Socket = ControllerConnection["socket"];',
        'export const entryPoints = [serveControllerConnection, createWebSocketSender, BrowserControllerClient];',
        '',
      ].join('\n'),
    );
    const tsc = path.join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', scratch]).then(
      () => ({ output: '', ok: true }),
      (error: { stdout?: string; stderr?: string }) => ({
        output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
        ok: false,
      }),
    );
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  });
});
