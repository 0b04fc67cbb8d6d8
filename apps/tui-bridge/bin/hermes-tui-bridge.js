#!/usr/bin/env node
// The `hermes-tui-bridge` command: runs the built entry, dist/bin.js. This file is committed so that
// `pnpm install` can link the command on a clean clone, before anything is built.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    `hermes-tui-bridge: @hermes/tui-bridge is not built (${fileURLToPath(entry)} is missing). Run \`pnpm build\` in the hermes-ts checkout, then try again.\n`,
  );
  process.exit(1);
}
await import(entry.href);
