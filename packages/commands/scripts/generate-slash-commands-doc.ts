// Regenerates the command tables in docs/slash-commands.md from the registry.
//   pnpm --filter @hermes/commands docs:generate            rewrite the file
//   pnpm --filter @hermes/commands docs:generate --check    exit 1 when the file is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderSlashCommandsDoc } from './slash-commands-doc.js';

const docPath = fileURLToPath(new URL('../../../docs/slash-commands.md', import.meta.url));
const current = readFileSync(docPath, 'utf8');
const next = renderSlashCommandsDoc(current);

if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error(`${docPath} is stale; run: pnpm --filter @hermes/commands docs:generate`);
    process.exitCode = 1;
  } else console.log(`${docPath} is up to date`);
} else if (next === current) console.log(`${docPath} is up to date`);
else {
  writeFileSync(docPath, next);
  console.log(`wrote ${docPath}`);
}
