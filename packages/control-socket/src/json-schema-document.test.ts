import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FILE, renderControlSocketJsonSchema } from './json-schema-document.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('checked-in JSON Schema', () => {
  it('matches what the valibot schemas generate (run schema:generate after changing them)', async () => {
    const checkedIn = await readFile(path.join(packageRoot, JSON_SCHEMA_FILE), 'utf8');
    expect(checkedIn).toBe(renderControlSocketJsonSchema());
  });

  it('describes the request, both replies and the identify and status results', () => {
    const document = JSON.parse(renderControlSocketJsonSchema()) as {
      $defs: Record<string, { required?: string[] }>;
    };
    expect(Object.keys(document.$defs).sort()).toEqual([
      'ControlErrorReply',
      'ControlReply',
      'ControlRequest',
      'ControlSuccessReply',
      'IdentifyResult',
      'StatusResult',
    ]);
    expect(document.$defs.ControlRequest?.required).toEqual(['verb']);
    expect(document.$defs.IdentifyResult?.required).toContain('pid');
  });
});
