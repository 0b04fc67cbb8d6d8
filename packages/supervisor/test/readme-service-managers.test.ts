import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** The `ts` block of the README's "Service managers" section and the `text` block after it. */
async function serviceManagersExample(): Promise<{ code: string; output: string }> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Service managers'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  const output = /```text\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined || output === undefined) throw new Error('README example is missing');
  return { code, output };
}

describe('the README service-managers example', () => {
  it('runs as written and prints what the README shows', async () => {
    const { code, output } = await serviceManagersExample();
    // Inside the package folder so `@hermes/supervisor` resolves to this package (self-reference);
    // the source condition runs the current sources rather than a stale build.
    const folder = `${packageDir}test-results/readme-${process.pid}`;
    await mkdir(folder, { recursive: true });
    const file = `${folder}/service-managers.mts`;
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
