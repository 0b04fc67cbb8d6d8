import { writeFile } from 'node:fs/promises';
import { JSON_SCHEMA_FILE, renderBrowserControlJsonSchema } from './json-schema.js';

// Regenerates schema/browser-control.v1.schema.json after a change to src/protocol.ts.
await writeFile(JSON_SCHEMA_FILE, renderBrowserControlJsonSchema());
