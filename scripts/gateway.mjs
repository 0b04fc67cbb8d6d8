#!/usr/bin/env node
// `pnpm gateway`: builds what the gateway needs, then runs it in the foreground (Ctrl-C stops it
// cleanly). Arguments after `--` go to the gateway: `pnpm gateway -- --port 9000`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const gatewayDir = path.join(root, 'apps', 'gateway');
if (!existsSync(path.join(gatewayDir, 'package.json'))) {
  console.error('hermes: apps/gateway is missing from this checkout.');
  process.exit(1);
}
// Under `pnpm <script>` (including `npx pnpm@… gateway`), npm_execpath is pnpm's own entry file.
const pnpmEntry = process.env.npm_execpath ?? '';
const useEntry = /pnpm/.test(pnpmEntry);
const build = spawnSync(
  useEntry ? process.execPath : 'pnpm',
  [
    ...(useEntry ? [pnpmEntry] : []),
    'turbo',
    'run',
    'build',
    '--filter=@hermes/gateway...',
    '--output-logs=errors-only',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    // turbo.json cannot switch telemetry off; see scripts/turbo.mjs.
    env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env },
  },
);
if (build.status !== 0) process.exit(build.status ?? 1);

// The gateway runs as a direct child (not through another pnpm), so its own signal handling —
// drain, clean stop, exit code — is what the terminal sees.
const args = process.argv.slice(2).filter((arg, index) => !(index === 0 && arg === '--'));
const child = spawn(process.execPath, [path.join(gatewayDir, 'dist', 'bin.js'), ...args], {
  cwd: root,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  // A terminal's Ctrl-C reaches the gateway directly too; it ignores the repeat.
  process.on(signal, () => child.kill(signal));
}
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
