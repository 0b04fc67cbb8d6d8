import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** The README's first `js` block and the `text` block that shows its output. */
async function readmeExample(): Promise<{ code: string; output: string }> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const code = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  const output = /```text\n([\s\S]*?)```/.exec(readme)?.[1];
  if (code === undefined || output === undefined)
    throw new Error('README example or its output is missing');
  return { code, output };
}

describe('the README example', () => {
  it('runs as written and prints what the README shows', async () => {
    const { code, output } = await readmeExample();
    // Inside the package folder so `@hermes/review-engine` resolves to this package (self-reference);
    // the source condition runs the current sources rather than a stale build.
    const folder = `${packageDir}test-results/readme-${process.pid}`;
    await mkdir(folder, { recursive: true });
    const file = `${folder}/example.mjs`;
    await writeFile(file, code);
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--conditions=@hermes/source', '--import', 'tsx', file],
        { cwd: packageDir, timeout: 15_000 },
      );
      expect(stdout).toBe(output);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
