import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expectReadmeOutput,
  installLineProblems,
  README_EXAMPLE_TIMEOUT_MS,
  type ReadmeExample,
  type ReadmeFile,
  readReadmeExamples,
  runReadmeExample,
  workspaceSourceNodeArgs,
} from './readme/index.js';

export interface TestReadmeExamplesOptions {
  /**
   * The package folder. Examples are written inside it, so the package resolves itself by name
   * and its dependencies resolve as they do for its tests — against their sources.
   */
  readonly packageRoot: string | URL;
  /**
   * The README to read, relative to `packageRoot` (default `README.md`) — another package's
   * README whose examples need this package (select them with `select`).
   */
  readonly readme?: string;
  /** Which examples run here (default: all of them). */
  readonly select?: (example: ReadmeExample) => boolean;
  /** Check the install lines (default: when the README is the package's own). */
  readonly installLines?: boolean;
  /** Per example; default README_EXAMPLE_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Default `empty`: an example's warnings are seen by every reader, so they fail its test. */
  readonly stderr?: 'ignored' | 'empty';
}

let suites = 0;

/**
 * Registers a package's README tests (docs/releasing.md): the install lines name the package and
 * every package an example imports, and each example runs as written — a fresh Node process, a
 * fresh home, no HERMES_HOME or API keys from the caller — exits by itself and prints what the
 * README's ```text block shows. Returns the parsed README for tests of its own.
 */
export function testReadmeExamples(options: TestReadmeExamplesOptions): ReadmeFile {
  const packageRoot =
    typeof options.packageRoot === 'string'
      ? options.packageRoot
      : fileURLToPath(options.packageRoot);
  const readmeName = options.readme ?? 'README.md';
  const readme = readReadmeExamples(path.resolve(packageRoot, readmeName));
  const examples = readme.examples.filter(options.select ?? (() => true));
  suites += 1;
  const directory = path.join(packageRoot, 'test-results', `readme-${process.pid}-${suites}`);
  const timeoutMs = options.timeoutMs ?? README_EXAMPLE_TIMEOUT_MS;
  describe(`${readmeName} examples`, () => {
    afterAll(() => rmSync(directory, { recursive: true, force: true }));

    if (options.installLines ?? options.readme === undefined) {
      it('has install lines naming the package and every package an example imports', () => {
        const manifest = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));
        const packageName = (manifest as { name: string }).name;
        expect(installLineProblems(readme, { packageName, readmeName }).join('\n')).toBe('');
      });
    }

    it('has examples to run', () => {
      expect(examples.length).toBeGreaterThan(0);
    });

    for (const example of examples) {
      it(`${readmeName}:${example.line} runs as written, exits by itself and prints what the README shows`, {
        timeout: timeoutMs + 15_000,
      }, async () => {
        const run = await runReadmeExample(example, {
          directory,
          nodeArgs: workspaceSourceNodeArgs(),
          timeoutMs,
        });
        expectReadmeOutput(example, run, { readmeName, stderr: options.stderr ?? 'empty' });
      });
    }
  });
  return readme;
}
