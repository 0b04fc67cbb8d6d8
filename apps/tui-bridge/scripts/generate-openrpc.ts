import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderOpenRpcDocument } from '../src/contract/openrpc-file.js';

const target = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'openrpc.schema.json');
writeFileSync(target, renderOpenRpcDocument());
process.stdout.write(`wrote ${target}\n`);
