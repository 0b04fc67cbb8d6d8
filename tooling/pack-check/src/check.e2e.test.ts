import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkPackages } from './check.js';

// The real repository root: the fixture uses its LICENSE and its .pnpmfile.cjs hook.
const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const sandbox = mkdtempSync(path.join(tmpdir(), 'pack-check-e2e-'));
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

const README = `# @hermes/demo

\`\`\`sh
npm install @hermes/demo
\`\`\`

\`\`\`ts
import { greet } from '@hermes/demo';

const line: string = greet('Ada');
console.log(line);
\`\`\`

\`\`\`text
hello Ada
\`\`\`
`;

/**
 * A one-package pnpm workspace shaped like ours: the root LICENSE (pnpm packs it into the
 * package), the beforePacking hook, a changeset and a built dist.
 */
function writeWorkspace(root: string): string {
  const demo = path.join(root, 'packages', 'demo');
  mkdirSync(path.join(demo, 'dist'), { recursive: true });
  mkdirSync(path.join(root, '.changeset'), { recursive: true });
  copyFileSync(path.join(repositoryRoot, 'LICENSE'), path.join(root, 'LICENSE'));
  copyFileSync(path.join(repositoryRoot, '.pnpmfile.cjs'), path.join(root, '.pnpmfile.cjs'));
  writeFileSync(path.join(root, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n');
  writeFileSync(
    path.join(root, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, packageManager: 'pnpm@10.34.9' }),
  );
  writeFileSync(
    path.join(root, '.changeset', 'demo-initial.md'),
    '---\n"@hermes/demo": minor\n---\n\nFirst release.\n',
  );
  writeFileSync(
    path.join(demo, 'package.json'),
    JSON.stringify(
      {
        name: '@hermes/demo',
        version: '0.0.0',
        description: 'A fixture package.',
        license: 'MIT',
        type: 'module',
        sideEffects: false,
        exports: {
          '.': {
            '@hermes/source': './src/index.ts',
            types: './dist/index.d.ts',
            default: './dist/index.js',
          },
          './package.json': './package.json',
        },
        main: './dist/index.js',
        types: './dist/index.d.ts',
        files: ['dist', 'README.md'],
        engines: { node: '>=20.12' },
        devDependencies: { typescript: '~5.9.3' },
      },
      null,
      2,
    ),
  );
  writeFileSync(path.join(demo, 'README.md'), README);
  writeFileSync(
    path.join(demo, 'dist', 'index.js'),
    "export function greet(name) {\n  return 'hello ' + name;\n}\n",
  );
  writeFileSync(
    path.join(demo, 'dist', 'index.d.ts'),
    'export declare function greet(name: string): string;\n',
  );
  return demo;
}

describe('checkPackages on a fixture workspace', () => {
  const root = path.join(sandbox, 'workspace');
  const cacheDirectory = path.join(sandbox, 'cache');
  const demo = writeWorkspace(root);

  it('passes a package that works from its tarball, and reuses the install when nothing changed', async () => {
    const first = await checkPackages({ root, cacheDirectory });
    expect(first.general).toEqual([]);
    expect(first.packages).toEqual([
      { name: '@hermes/demo', version: '0.0.0', problems: [], notes: [], examples: 1 },
    ]);

    const lines: string[] = [];
    const second = await checkPackages({ root, cacheDirectory, log: (line) => lines.push(line) });
    expect(second.packages[0]?.problems).toEqual([]);
    expect(lines.some((line) => line.startsWith('scratch project reused'))).toBe(true);
    expect(lines.some((line) => line.includes('1 cached'))).toBe(true);
  }, 240_000);

  it('names each broken stage: manifest, licence, version plan, declarations, README install line and output', async () => {
    rmSync(path.join(root, '.pnpmfile.cjs')); // without the hook, pnpm publishes the manifest as is
    writeFileSync(path.join(demo, 'LICENSE'), 'All rights reserved.\n');
    writeFileSync(
      path.join(demo, 'dist', 'index.d.ts'),
      'export declare function greet(name: string): Greeting;\n',
    );
    writeFileSync(
      path.join(demo, 'README.md'),
      README.replace('hello Ada', 'hello, Ada').replace(
        'npm install @hermes/demo',
        'npm install @hermes/dem0',
      ),
    );
    writeFileSync(
      path.join(root, '.changeset', 'demo-initial.md'),
      '---\n"@hermes/demo": patch\n---\n',
    );

    const result = await checkPackages({ root, cacheDirectory });
    const problems = result.packages[0]?.problems ?? [];
    expect(problems.find((problem) => problem.startsWith('LICENSE:'))).toContain(
      'differs from the root LICENSE',
    );
    expect(problems.find((problem) => problem.startsWith('version plan:'))).toContain(
      'would be 0.0.1',
    );
    expect(problems.find((problem) => problem.includes('TS2304'))).toContain(
      "node_modules/@hermes/demo/dist/index.d.ts(1,46): TS2304 Cannot find name 'Greeting'",
    );
    expect(problems.find((problem) => problem.includes('does not show'))).toContain(
      'README example (README.md:7) printed output that README.md:14 does not show',
    );
    expect(problems.filter((problem) => problem.startsWith('README:'))).toEqual([
      'README: no install line names @hermes/demo (a ```sh block with `npm install @hermes/demo …`)',
      'README: the install line names @hermes/dem0, which is not a public package',
    ]);
    expect(problems.find((problem) => problem.includes('no install line names — '))).toBe(
      'README example (README.md:7) imports @hermes/demo, which no install line names — with pnpm (strict node_modules) the example fails',
    );
    expect(problems.filter((problem) => problem.startsWith('manifest:'))).toEqual([
      expect.stringContaining('exports["."]["@hermes/source"] is published'),
      expect.stringContaining('devDependencies are published'),
    ]);
    expect(problems).toHaveLength(9);
  }, 240_000);

  it('never fetches an @hermes package from a registry: an unknown one fails the install', async () => {
    writeWorkspace(root); // a healthy package again (the hook restored, LICENSE removed below)
    rmSync(path.join(demo, 'LICENSE'));
    const manifestFile = path.join(demo, 'package.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    manifest.dependencies = { '@hermes/ghost': '^1.0.0' };
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));

    const started = performance.now();
    const result = await checkPackages({ root, cacheDirectory });
    expect(result.packages[0]?.problems).toEqual([
      'manifest: dependencies["@hermes/ghost"] is not a package of this workspace, so it cannot be published with it',
    ]);
    expect(result.general).toEqual([
      expect.stringContaining(
        'npm asked a registry for @hermes/ghost: every @hermes package must come from a tarball',
      ),
    ]);
    expect(result.packages[0]?.examples).toBe(0); // nothing ran against a broken install
    expect(performance.now() - started).toBeLessThan(60_000); // refused at once, no retries
  }, 240_000);
});
