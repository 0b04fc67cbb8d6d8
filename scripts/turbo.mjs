#!/usr/bin/env node
// Runs the workspace's pinned turbo with the repository's own settings. turbo.json has no key for
// telemetry (only the TURBO_TELEMETRY_DISABLED variable does it), so the root scripts go through
// this file: a newcomer's first `pnpm test` prints no telemetry notice, on every OS.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const turbo = require.resolve('turbo/bin/turbo');

const result = spawnSync(process.execPath, [turbo, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env },
});
if (result.error) throw result.error;
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
