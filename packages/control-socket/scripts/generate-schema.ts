// Regenerates the checked-in JSON Schema from the valibot schemas:
//   pnpm --filter @hermes/control-socket schema:generate
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSON_SCHEMA_FILE, renderControlSocketJsonSchema } from '../src/json-schema-document.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(packageRoot, JSON_SCHEMA_FILE);
await mkdir(path.dirname(target), { recursive: true });
await writeFile(target, renderControlSocketJsonSchema());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
