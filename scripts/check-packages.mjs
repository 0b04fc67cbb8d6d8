#!/usr/bin/env node
// `pnpm check:packages [--package <name>]… [--no-cache]`: builds what the package check needs —
// every public workspace package and the checker itself, not the apps — then runs the check
// (tooling/pack-check, described in docs/releasing.md).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// Under `pnpm <script>`, npm_execpath is pnpm's own entry file: use the pinned pnpm.
const pnpmEntry = process.env.npm_execpath ?? '';
const pnpm = (args, options = {}) => {
  const useEntry = /pnpm/.test(path.basename(pnpmEntry));
  return spawnSync(useEntry ? process.execPath : 'pnpm', useEntry ? [pnpmEntry, ...args] : args, {
    cwd: root,
    ...options,
  });
};

const listed = pnpm(['ls', '--recursive', '--depth', '-1', '--json'], { encoding: 'utf8' });
if (listed.status !== 0) {
  process.stderr.write(listed.stderr || listed.stdout);
  process.exit(listed.status ?? 1);
}
const filters = JSON.parse(listed.stdout)
  .filter((entry) => entry.name && entry.private !== true)
  .map((entry) => `--filter=${entry.name}...`);

const build = spawnSync(
  process.execPath,
  [
    path.join(root, 'scripts', 'turbo.mjs'),
    'run',
    'build',
    ...filters,
    '--filter=@hermes/pack-check...',
    '--output-logs=errors-only',
  ],
  { cwd: root, stdio: 'inherit' },
);
if (build.status !== 0) process.exit(build.status ?? 1);

const check = spawnSync(
  process.execPath,
  [path.join(root, 'tooling', 'pack-check', 'dist', 'cli.js'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
process.exit(check.status ?? 1);
