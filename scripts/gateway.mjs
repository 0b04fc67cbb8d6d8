#!/usr/bin/env node
// `pnpm gateway`: builds what the gateway needs and runs it in the foreground.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const gatewayDir = path.join(root, 'apps', 'gateway');
if (!existsSync(path.join(gatewayDir, 'package.json'))) {
  console.error(
    'hermes: the gateway app (apps/gateway) has not landed yet; the libraries and their tests are usable today (see README.md).',
  );
  process.exit(1);
}
// Under `pnpm <script>` (including `npx pnpm@… gateway`), npm_execpath is pnpm's own entry file.
const pnpmEntry = process.env.npm_execpath ?? '';
const run = (args) => {
  const useEntry = /pnpm/.test(pnpmEntry);
  const result = spawnSync(
    useEntry ? process.execPath : 'pnpm',
    useEntry ? [pnpmEntry, ...args] : args,
    {
      cwd: root,
      stdio: 'inherit',
      // turbo.json cannot switch telemetry off; see scripts/turbo.mjs.
      env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env },
    },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
};
run(['turbo', 'run', 'build', '--filter=@hermes/gateway...', '--output-logs=errors-only']);
run(['--filter', '@hermes/gateway', 'start', ...process.argv.slice(2)]);
