import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  README_EXAMPLE_TIMEOUT_MS,
  type ReadmeExample,
  readmeRunProblems,
  runReadmeProgram,
  writeReadmeExample,
} from '@hermes/testkit/readme';
import { cleanEnvironment } from './scratch.js';

// Extracting, running and judging README examples is @hermes/testkit's (`/readme`), shared with
// every package's own README test; this file puts them in the scratch project.
export { killRunningExamples } from '@hermes/testkit/readme';

export const EXAMPLE_TIMEOUT_MS = README_EXAMPLE_TIMEOUT_MS;

export interface MaterialisedExample {
  readonly packageName: string;
  readonly example: ReadmeExample;
  /** The file the type-check reads (`.ts`) or, for a JavaScript example, the one Node runs. */
  readonly sourceFile: string;
  /** The ESM file Node runs. */
  readonly runFile: string;
}

/** Writes an example where its imports resolve from the scratch project's node_modules. */
export function materialiseExample(
  folder: string,
  packageName: string,
  example: ReadmeExample,
): MaterialisedExample {
  return { packageName, example, ...writeReadmeExample(example, folder) };
}

/**
 * Runs one example as a stranger would run their copy (a fresh Node process and home, a
 * deadline) and returns what is wrong with it: empty when it exits 0 and prints what the README
 * shows.
 */
export async function runExample(
  materialised: MaterialisedExample,
  { timeoutMs = EXAMPLE_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<string[]> {
  const run = await runReadmeProgram(materialised.runFile, { timeoutMs });
  return readmeRunProblems(materialised.example, run);
}

/** Runs tasks with at most `limit` at once (2 on the 2-core CI machine). */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `import()` and `require()` of every JavaScript entry point from the scratch project, in one Node
 * process: the `default` export condition is what lets `require()` load an ESM-only package on
 * Node versions that can (20.19+, 22.12+).
 */
export function checkEntryPoints(
  scratchDirectory: string,
  specifiers: readonly string[],
): Map<string, string[]> {
  const folder = path.join(scratchDirectory, 'checks');
  mkdirSync(folder, { recursive: true });
  const script = path.join(folder, 'entry-points.cjs');
  writeFileSync(
    script,
    `'use strict';
const specifiers = ${JSON.stringify(specifiers)};
const results = {};
const describe = (error) => (error && error.code ? error.code + ': ' : '') + String(error && error.message ? error.message : error).split('\\n')[0];
(async () => {
  for (const specifier of specifiers) {
    const problems = [];
    try { await import(specifier); } catch (error) { problems.push('import() fails: ' + describe(error)); }
    try { require(specifier); } catch (error) {
      const hint = error && error.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' ? ' (the export has no "default" condition)' : '';
      problems.push('require() fails: ' + describe(error) + hint);
    }
    results[specifier] = problems;
  }
  process.stdout.write(JSON.stringify(results));
  process.exit(0);
})();
`,
  );
  const result = spawnSync(process.execPath, ['--no-warnings', script], {
    cwd: folder,
    env: cleanEnvironment(),
    encoding: 'utf8',
    timeout: EXAMPLE_TIMEOUT_MS,
  });
  const problems = new Map<string, string[]>();
  try {
    for (const [specifier, list] of Object.entries(
      JSON.parse(result.stdout) as Record<string, string[]>,
    )) {
      problems.set(specifier, list);
    }
  } catch {
    for (const specifier of specifiers) {
      problems.set(specifier, [
        `loading the entry points failed: ${
          String(result.stderr || result.error || 'no output')
            .trim()
            .split('\n')[0]
        }`,
      ]);
    }
  }
  return problems;
}
