import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessRunning } from '../spawn-process.js';
import type { ReadmeExample } from './parse-readme.js';
import {
  freshExampleEnvironment,
  runReadmeExample,
  workspaceSourceNodeArgs,
  writeReadmeExample,
} from './run-example.js';

const folder = mkdtempSync(path.join(tmpdir(), 'testkit-examples-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let line = 0;
const example = (fields: Omit<ReadmeExample, 'line'>): ReadmeExample => {
  line += 10;
  return { ...fields, line };
};

describe('writeReadmeExample', () => {
  it('writes a TypeScript example as written and as the ESM Node runs, types erased', () => {
    const written = writeReadmeExample(
      example({ language: 'ts', code: 'const answer: number = 42;\nconsole.log(answer);' }),
      folder,
    );
    expect(readFileSync(written.sourceFile, 'utf8')).toContain('answer: number');
    expect(path.extname(written.runFile)).toBe('.mjs');
    expect(readFileSync(written.runFile, 'utf8')).toContain('const answer = 42;');
  });
});

describe('runReadmeExample', () => {
  it('runs an example to its end and returns what it printed on each stream', async () => {
    const run = await runReadmeExample(
      example({
        language: 'ts',
        code: "const answer: number = 6 * 7;\nconsole.log('answer', answer);\nconsole.error('to stderr');",
      }),
      { directory: folder },
    );
    expect(run).toMatchObject({
      code: 0,
      signal: null,
      timedOut: false,
      stdout: 'answer 42\n',
      stderr: 'to stderr\n',
    });
  });

  it('returns the exit code of an example that throws, with its stderr', async () => {
    const run = await runReadmeExample(example({ language: 'js', code: 'rebuildSearchIndex();' }), {
      directory: folder,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('ReferenceError: rebuildSearchIndex is not defined');
  });

  it('kills an example that never exits at its deadline, and what it started with it', async () => {
    const started = performance.now();
    const run = await runReadmeExample(
      example({
        language: 'js',
        code: [
          "import { spawn } from 'node:child_process';",
          "const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
          'console.log(child.pid);',
          'setInterval(() => {}, 1000);',
        ].join('\n'),
      }),
      { directory: folder, timeoutMs: 1500 },
    );
    expect(run.timedOut).toBe(true);
    expect(run.timeoutMs).toBe(1500);
    expect(performance.now() - started).toBeLessThan(15_000);
    const grandchild = Number(run.stdout.trim());
    const deadline = performance.now() + 5000;
    while (isProcessRunning(grandchild) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(isProcessRunning(grandchild)).toBe(false);
  });

  it("runs in a fresh, empty home and temp folder, without the caller's HERMES_HOME or keys", async () => {
    process.env.HERMES_HOME = '/should/not/leak';
    process.env.OPENAI_API_KEY = 'sk-should-not-leak';
    process.env.NODE_OPTIONS = '--no-warnings';
    try {
      const run = await runReadmeExample(
        example({
          language: 'js',
          code: [
            "import { homedir, tmpdir } from 'node:os';",
            "import { readdirSync } from 'node:fs';",
            "import path from 'node:path';",
            'console.log(process.env.HERMES_HOME ?? "unset", process.env.OPENAI_API_KEY ?? "unset", process.env.NODE_OPTIONS ?? "unset");',
            'console.log(readdirSync(homedir()).length, homedir() !== process.env.CALLER_HOME, path.dirname(homedir()) === tmpdir());',
            'console.log(readdirSync(process.cwd()).length);',
          ].join('\n'),
        }),
        { directory: folder, env: { CALLER_HOME: process.env.HOME } },
      );
      expect(run.stdout).toBe('unset unset unset\n0 true true\n0\n');
    } finally {
      delete process.env.HERMES_HOME;
      delete process.env.OPENAI_API_KEY;
      delete process.env.NODE_OPTIONS;
    }
  });

  it('removes the home and temp folder afterwards', async () => {
    const run = await runReadmeExample(
      example({
        language: 'js',
        code: "import { tmpdir } from 'node:os';\nconsole.log(tmpdir());",
      }),
      { directory: folder },
    );
    expect(run.code).toBe(0);
    expect(existsSync(run.stdout.trim())).toBe(false);
  });

  it('passes extra variables on, after the fresh ones', async () => {
    const run = await runReadmeExample(
      example({ language: 'js', code: 'console.log(process.env.HERMES_HOME);' }),
      { directory: folder, env: { HERMES_HOME: '/prepared/home' } },
    );
    expect(run.stdout).toBe('/prepared/home\n');
  });

  it("runs against this workspace's sources with workspaceSourceNodeArgs", async () => {
    // Written inside this package, the example resolves @hermes/testkit by name — to src/.
    const testkitRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const directory = path.join(testkitRoot, 'test-results', `run-example-${process.pid}`);
    try {
      const run = await runReadmeExample(
        example({
          language: 'ts',
          code: [
            "import { compareOutput } from '@hermes/testkit/readme';",
            "const source: string = import.meta.resolve('@hermes/testkit/readme');",
            "console.log(compareOutput('a …', 'a b').matches, source.endsWith('/src/readme/index.ts'));",
          ].join('\n'),
        }),
        { directory, nodeArgs: workspaceSourceNodeArgs() },
      );
      expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        code: 0,
        stdout: 'true true\n',
        stderr: '',
      });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('freshExampleEnvironment', () => {
  it('keeps PATH and sets the home, the temp folder and NO_COLOR', () => {
    const environment = freshExampleEnvironment({ home: '/h', temp: '/t' });
    expect(environment).toMatchObject({
      PATH: process.env.PATH,
      HOME: '/h',
      USERPROFILE: '/h',
      TMPDIR: '/t',
      NO_COLOR: '1',
    });
    expect(Object.keys(environment).filter((name) => /VITEST|HERMES|npm_/.test(name))).toEqual([]);
  });
});
