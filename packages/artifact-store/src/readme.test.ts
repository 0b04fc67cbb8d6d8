import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  importedPackages,
  readReadmeExamples,
  runReadmeExample,
} from './testing/readme-examples.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readme = await readReadmeExamples(path.join(packageRoot, 'README.md'));

describe('README examples', () => {
  it('has an install line naming every package an example imports', () => {
    expect(readme.examples.length).toBeGreaterThan(0);
    const imported = readme.examples.flatMap((example) => importedPackages(example.code));
    expect(imported.filter((name) => !readme.installed.has(name))).toEqual([]);
  });

  it.each(
    readme.examples.map((example, index) => ({ ...example, index, label: String(index + 1) })),
  )(
    'example $label runs as written, prints what the README shows and exits by itself',
    { timeout: 40_000 },
    async ({ code, prints, index }) => {
      expect(prints, 'the README shows what the example prints').toBeDefined();
      const run = await runReadmeExample({
        packageRoot,
        code,
        name: `example-${index}`,
        timeoutMilliseconds: 20_000,
      });
      expect(run.exitedByItself, `still running after 20 s; stderr: ${run.stderr}`).toBe(true);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toBe(prints);
    },
  );
});
