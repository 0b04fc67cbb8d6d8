import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The first fenced block of `language` after `heading` in the README. */
function fencedBlockAfter(readme: string, heading: string, language: string): string {
  const section = readme.slice(readme.indexOf(heading));
  const match = section.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``));
  if (!match?.[1]) throw new Error(`no ${language} block after ${heading}`);
  return match[1];
}

describe('README', () => {
  it('runs the example as written and prints what the README says it prints', async () => {
    const readme = await readFile(path.join(packageRoot, 'README.md'), 'utf8');
    const example = fencedBlockAfter(readme, '## Example', 'ts');
    const printed = fencedBlockAfter(readme, '## Example', 'console');
    // The install line names every package the example imports.
    const install = fencedBlockAfter(readme, '## Install', 'sh');
    const imported = [...example.matchAll(/from '([^']+)'/g)]
      .map((match) => match[1] as string)
      .filter((specifier) => !specifier.startsWith('node:'));
    for (const specifier of imported) expect(install).toContain(specifier);
    // Evaluated from the package root, so `@hermes/control-socket` resolves to this package (its
    // sources, through the `@hermes/source` condition); the code itself is exactly the README's.
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '--conditions=@hermes/source',
        '--import',
        'tsx',
        '--input-type=module',
        '--eval',
        example,
      ],
      cwd: packageRoot,
    });
    const exit = await child.exited;
    expect({ exit, stderr: child.stderr() }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
    expect(child.stdout()).toBe(printed);
  });
});
