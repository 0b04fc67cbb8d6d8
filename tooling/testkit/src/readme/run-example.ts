import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import type { ReadmeExample } from './parse-readme.js';

/** How long an example may run before it is killed (it must exit by itself). */
export const README_EXAMPLE_TIMEOUT_MS = 30_000;

export interface WrittenExample {
  /** The file as the README shows it (`.ts` for a TypeScript example): what a type-check reads. */
  readonly sourceFile: string;
  /** The ESM file Node runs (the TypeScript example transpiled, types erased). */
  readonly runFile: string;
}

/**
 * Writes an example as a program file in `directory`. Its imports resolve from there, so put it
 * where the packages it names are installed (inside a package folder, a package resolves itself).
 */
export function writeReadmeExample(
  example: ReadmeExample,
  directory: string,
  name = `readme-line-${example.line}`,
): WrittenExample {
  mkdirSync(directory, { recursive: true });
  const base = path.join(directory, name);
  const runFile = `${base}.mjs`;
  if (example.language === 'js') {
    writeFileSync(runFile, example.code);
    return { sourceFile: runFile, runFile };
  }
  const sourceFile = `${base}.ts`;
  writeFileSync(sourceFile, example.code);
  const { outputText } = ts.transpileModule(example.code, {
    fileName: sourceFile,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  writeFileSync(runFile, outputText);
  return { sourceFile, runFile };
}

/**
 * Node arguments that run an example against this workspace's sources rather than a build: the
 * `@hermes/source` export condition and the tsx loader (by absolute URL, so it resolves from any
 * working directory).
 */
export function workspaceSourceNodeArgs(): string[] {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--conditions=@hermes/source', '--import', tsx];
}

/** Variables a stranger's shell has that an example may rely on; nothing else is passed on. */
const INHERITED =
  /^(PATH|PATHEXT|SYSTEMROOT|SystemRoot|COMSPEC|ComSpec|WINDIR|LANG|LANGUAGE|LC_\w+|TZ|TERM|USER|LOGNAME|SHELL)$/;

/**
 * The environment of an example run: a fresh, empty home (`HOME`, and so the default
 * `HERMES_HOME`) and temp folder, PATH and the locale from the caller — and nothing that
 * configures the product (no `HERMES_HOME`, no API keys, no `NODE_OPTIONS`). `extra` comes last.
 */
export function freshExampleEnvironment(
  sandbox: { readonly home: string; readonly temp: string },
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (INHERITED.test(name)) environment[name] = value;
  }
  return {
    ...environment,
    HOME: sandbox.home,
    USERPROFILE: sandbox.home,
    TMPDIR: sandbox.temp,
    NO_COLOR: '1',
    ...extra,
  };
}

/** Process groups of the examples running now (each example is its own group leader). */
const running = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Kills every example still running — for an interrupted run, so none is left behind. */
export function killRunningExamples(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

export interface RunReadmeProgramOptions {
  /** Added to the fresh environment (for example `HERMES_HOME` of a home the test prepared). */
  readonly env?: NodeJS.ProcessEnv;
  /** Arguments for Node before the program (for example workspaceSourceNodeArgs()). */
  readonly nodeArgs?: readonly string[];
  /** Default README_EXAMPLE_TIMEOUT_MS. */
  readonly timeoutMs?: number;
}

export interface RunReadmeExampleOptions extends RunReadmeProgramOptions {
  /** Where the program file is written; its imports resolve from there (see writeReadmeExample). */
  readonly directory: string;
  /** File name without extension (default `readme-line-<line>`). */
  readonly name?: string;
}

export interface ReadmeRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The example was still running at the deadline and was killed. */
  readonly timedOut: boolean;
  readonly timeoutMs: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Writes an example where `options.directory` says (writeReadmeExample) and runs it (runReadmeProgram). */
export async function runReadmeExample(
  example: ReadmeExample,
  options: RunReadmeExampleOptions,
): Promise<ReadmeRun> {
  const { runFile } = writeReadmeExample(example, options.directory, options.name);
  return runReadmeProgram(runFile, options);
}

/**
 * Runs a written example the way a stranger would run their copy of it: a fresh Node process in
 * an empty working folder, a fresh home and temp folder (removed afterwards), no settings from
 * the calling environment beyond PATH and the locale, and a deadline. Whatever the example
 * started and left behind (its whole process group) is killed when it ends.
 */
export async function runReadmeProgram(
  runFile: string,
  options: RunReadmeProgramOptions = {},
): Promise<ReadmeRun> {
  const timeoutMs = options.timeoutMs ?? README_EXAMPLE_TIMEOUT_MS;
  const sandbox = mkdtempSync(path.join(tmpdir(), 'hermes-example-'));
  const home = path.join(sandbox, 'home');
  const work = path.join(sandbox, 'work');
  mkdirSync(home);
  mkdirSync(work);
  try {
    return await new Promise<ReadmeRun>((resolve) => {
      const child = spawn(process.execPath, [...(options.nodeArgs ?? []), runFile], {
        cwd: work,
        env: freshExampleEnvironment({ home, temp: sandbox }, options.env),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
      });
      const pid = child.pid;
      if (pid !== undefined) running.add(pid);
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', (error) => {
        stderr += `\n[spawn error] ${error.message}\n`;
      });
      const timer = setTimeout(() => {
        timedOut = true;
        if (pid !== undefined) killGroup(pid);
      }, timeoutMs);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (pid !== undefined) {
          killGroup(pid); // anything the example started and left behind
          running.delete(pid);
        }
        resolve({ code, signal, timedOut, timeoutMs, stdout, stderr });
      });
    });
  } finally {
    rmSync(sandbox, { recursive: true, force: true, maxRetries: 3 });
  }
}
