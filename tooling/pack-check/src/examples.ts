import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { compareOutput } from './output.js';
import type { ReadmeExample } from './readme.js';
import { cleanEnvironment } from './scratch.js';

export const EXAMPLE_TIMEOUT_MS = 30_000;

/** Process groups of the examples running now (each example is its own group leader). */
const running = new Set<number>();

/** Kills every example still running — for an interrupted check, so none is left behind. */
export function killRunningExamples(): void {
  for (const pid of running) {
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

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
  mkdirSync(folder, { recursive: true });
  const base = path.join(folder, `readme-line-${example.line}`);
  const runFile = `${base}.mjs`;
  if (example.language === 'js') {
    writeFileSync(runFile, example.code);
    return { packageName, example, sourceFile: runFile, runFile };
  }
  const sourceFile = `${base}.ts`;
  writeFileSync(sourceFile, example.code);
  const { outputText } = ts.transpileModule(example.code, {
    fileName: sourceFile,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  writeFileSync(runFile, outputText);
  return { packageName, example, sourceFile, runFile };
}

const tail = (text: string, lines = 25) => {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? ['…', ...all.slice(-lines)] : all)
    .map((line) => `      ${line}`)
    .join('\n');
};

/**
 * Runs one example the way a stranger would run their copy of it: a fresh Node process, a fresh
 * home folder (HOME and so the default HERMES_HOME point into a temporary folder), no settings
 * from the calling environment beyond PATH and the like, and a deadline.
 */
export async function runExample(
  materialised: MaterialisedExample,
  { timeoutMs = EXAMPLE_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<string[]> {
  const { example } = materialised;
  const label = `README example (README.md:${example.line})`;
  const sandbox = mkdtempSync(path.join(tmpdir(), 'hermes-example-'));
  const home = path.join(sandbox, 'home');
  const work = path.join(sandbox, 'work');
  mkdirSync(home);
  mkdirSync(work);
  const environment = cleanEnvironment({
    HOME: home,
    USERPROFILE: home,
    TMPDIR: sandbox,
    NO_COLOR: '1',
  });
  for (const name of Object.keys(environment)) {
    if (/^(HERMES_|API_SERVER_|OPENAI_|FORCE_COLOR|CI$|VITEST)/.test(name))
      delete environment[name];
  }
  environment.NO_COLOR = '1';
  try {
    const outcome = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: string;
      stderr: string;
      timedOut: boolean;
    }>((resolve) => {
      const child = spawn(process.execPath, [materialised.runFile], {
        cwd: work,
        env: environment,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
      });
      if (child.pid !== undefined) running.add(child.pid);
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const killGroup = () => {
        try {
          if (child.pid !== undefined && process.platform !== 'win32')
            process.kill(-child.pid, 'SIGKILL');
          else child.kill('SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, timeoutMs);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        killGroup(); // anything the example started and left behind
        if (child.pid !== undefined) running.delete(child.pid);
        resolve({ code, signal, stdout, stderr, timedOut });
      });
    });
    if (outcome.timedOut) {
      return [
        `${label} did not exit within ${timeoutMs / 1000} s — something it opened (a server, socket or timer) keeps it alive; the example must close what it opens${outcome.stderr ? `\n    stderr:\n${tail(outcome.stderr)}` : ''}`,
      ];
    }
    if (outcome.code !== 0) {
      const how = outcome.signal
        ? `was killed by ${outcome.signal}`
        : `exited with code ${outcome.code}`;
      return [
        `${label} ${how}${outcome.stderr ? `\n    stderr:\n${tail(outcome.stderr)}` : ''}${outcome.stdout ? `\n    stdout:\n${tail(outcome.stdout)}` : ''}`,
      ];
    }
    if (!example.expectedOutput) {
      if (outcome.stdout.trim() === '') return [];
      return [
        `${label} printed output but the README shows none — put a \`\`\`text block right after the example showing:\n${tail(outcome.stdout)}`,
      ];
    }
    const comparison = compareOutput(example.expectedOutput.text, outcome.stdout);
    if (comparison.matches) return [];
    return [
      `${label} printed output that README.md:${example.expectedOutput.line} does not show (\`…\` matches anything within a line)\n    expected:\n${tail(comparison.expected, 40)}\n    printed:\n${tail(comparison.actual, 40)}`,
    ];
  } finally {
    rmSync(sandbox, { recursive: true, force: true });
  }
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
