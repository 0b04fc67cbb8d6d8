import { describe, expect, it } from 'vitest';
import { exampleImports } from './example-imports.js';
import { installLineProblems, packageNameFromSpec } from './install-lines.js';
import { parseReadme } from './parse-readme.js';

const readme = (install: string, code: string) =>
  parseReadme(`\`\`\`sh\n${install}\n\`\`\`\n\n\`\`\`ts\n${code}\n\`\`\`\n`);

describe('installLineProblems', () => {
  it('accepts install lines that name the package and every package an example imports', () => {
    const parsed = readme(
      'npm install @hermes/demo hono',
      "import { a } from '@hermes/demo/client';\nimport { Hono } from 'hono';\nimport 'node:fs';",
    );
    expect(installLineProblems(parsed, { packageName: '@hermes/demo' })).toEqual([]);
  });

  it('names an import that no install line names, with the README line of the example', () => {
    const parsed = readme('npm install @hermes/demo', "import { Hono } from 'hono';");
    expect(installLineProblems(parsed, { packageName: '@hermes/demo' })).toEqual([
      'README example (README.md:5) imports hono, which no install line names — with pnpm (strict node_modules) the example fails',
    ]);
  });

  it('names a README whose install lines leave out the package itself', () => {
    const parsed = readme('npm install hono', "import { Hono } from 'hono';");
    expect(installLineProblems(parsed, { packageName: '@hermes/demo' })).toEqual([
      'README: no install line names @hermes/demo (a ```sh block with `npm install @hermes/demo …`)',
    ]);
  });

  it('refuses a relative import and a README without examples', () => {
    const parsed = readme('npm install @hermes/demo', "import './local.js';");
    expect(installLineProblems(parsed, { readmeName: 'docs/x.md' })).toEqual([
      'README example (docs/x.md:5) imports "./local.js", which a reader\'s copy cannot resolve',
    ]);
    expect(installLineProblems(parseReadme('```sh\nnpm i @hermes/demo\n```'))).toEqual([
      'README: no example — a ```js or ```ts block that the check runs (docs/releasing.md)',
    ]);
  });
});

describe('exampleImports', () => {
  it('names the packages an example imports, statically, dynamically or with require', () => {
    const code = [
      "import { a } from '@hermes/demo/client';",
      "import type { B } from 'hono';",
      "import 'node:fs';",
      "import path from 'path';",
      "export * from '@scope/re-export';",
      "const lazy = await import('ws');",
      "const legacy = require('yaml');",
      "import local from './local.js';",
    ].join('\n');
    expect(exampleImports(code)).toEqual({
      packages: ['@hermes/demo', 'hono', '@scope/re-export', 'ws', 'yaml'],
      relative: ['./local.js'],
    });
  });

  it('strips versions from install specs, scoped or not', () => {
    expect(packageNameFromSpec('@hermes/demo@^0.1.0')).toBe('@hermes/demo');
    expect(packageNameFromSpec('hono@4')).toBe('hono');
    expect(packageNameFromSpec('ws')).toBe('ws');
  });
});
