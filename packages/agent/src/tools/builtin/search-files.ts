import { spawn } from 'node:child_process';
import { access, constants, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { defineTool } from '../define-tool.js';
import { resolveToolPath } from '../resolve-path.js';
import { globToRegExp } from './glob-pattern.js';
import { looksBinary } from './read-file.js';

export const SEARCH_DEFAULT_LIMIT = 50;
export const SEARCH_MAX_LIMIT = 1000;
/** Files above this size are skipped by the Node fallback's content search. */
const FALLBACK_MAX_FILE_BYTES = 2 * 1024 * 1024;
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules', '.hg', '.svn']);
const MAX_MATCH_TEXT = 300;

let ripgrepPath: Promise<string | undefined> | undefined;

/** `rg` on PATH, looked up once per process. */
export function findRipgrep(envPath = process.env.PATH ?? ''): Promise<string | undefined> {
  ripgrepPath ??= (async () => {
    for (const directory of envPath.split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(directory, 'rg');
      try {
        await access(candidate, constants.X_OK);
        return candidate;
      } catch {}
    }
    return undefined;
  })();
  return ripgrepPath;
}

export interface ContentMatch {
  readonly path: string;
  readonly line: number;
  readonly text: string;
}

export interface SearchArgs {
  pattern: string;
  target: 'content' | 'files';
  root: string;
  relativeTo: string;
  glob: string | undefined;
  limit: number;
  caseInsensitive: boolean;
  signal: AbortSignal;
}

function clip(text: string): string {
  return text.length > MAX_MATCH_TEXT ? `${text.slice(0, MAX_MATCH_TEXT)}…` : text;
}

/** Byte order of names, as `rg --sort path` orders a directory. */
function byName(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Every file under `root`, depth first, each directory's entries in byte order of their names —
 * the order `rg --sort path` reports, so both search paths list the same files first.
 */
async function* walk(root: string, signal: AbortSignal): AsyncGenerator<string> {
  if (signal.aborted) return;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((left, right) => byName(left.name, right.name));
  for (const entry of entries) {
    if (signal.aborted) return;
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) yield* walk(full, signal);
    } else if (entry.isFile()) yield full;
  }
}

/** The search without ripgrep: the reference semantics both paths share. */
export async function searchWithNode(
  args: SearchArgs,
): Promise<{ results: unknown[]; truncated: boolean }> {
  const glob = args.glob ? globToRegExp(args.glob) : undefined;
  const nameGlob = args.target === 'files' ? globToRegExp(args.pattern) : undefined;
  const regex =
    args.target === 'content'
      ? new RegExp(args.pattern, args.caseInsensitive ? 'i' : '')
      : undefined;
  const results: unknown[] = [];
  for await (const file of walk(args.root, args.signal)) {
    const relative = path.relative(args.relativeTo, file).split(path.sep).join('/');
    const fromRoot = path.relative(args.root, file).split(path.sep).join('/');
    if (glob && !glob.test(fromRoot)) continue;
    if (nameGlob) {
      if (nameGlob.test(fromRoot)) results.push(relative);
    } else if (regex) {
      const handle = await open(file, 'r').catch(() => undefined);
      if (!handle) continue;
      let text: string;
      try {
        const stats = await handle.stat();
        if (stats.size > FALLBACK_MAX_FILE_BYTES) continue;
        const buffer = await handle.readFile();
        if (looksBinary(buffer.subarray(0, 8192))) continue;
        text = buffer.toString('utf8');
      } finally {
        await handle.close();
      }
      const lines = text.split('\n');
      for (const [index, line] of lines.entries()) {
        if (!regex.test(line)) continue;
        results.push({ path: relative, line: index + 1, text: clip(line) } satisfies ContentMatch);
        if (results.length > args.limit) break;
      }
    }
    if (results.length > args.limit) break;
  }
  const truncated = results.length > args.limit;
  return { results: results.slice(0, args.limit), truncated };
}

/** Thrown when ripgrep cannot take a pattern JavaScript accepts (look-around, back-references). */
class RipgrepPatternError extends Error {}

/**
 * The same search through ripgrep, with the Node walk's semantics: hidden files included, ignore
 * files (`.gitignore`, …) not consulted, `.git`, `node_modules`, `.hg` and `.svn` skipped, results
 * in path order. File listings are filtered here with the same glob matcher as the Node walk.
 */
export function searchWithRipgrep(
  rg: string,
  args: SearchArgs,
): Promise<{ results: unknown[]; truncated: boolean }> {
  const skipped = [...SKIPPED_DIRECTORIES].flatMap((name) => ['--glob', `!${name}`]);
  const nameGlob = args.target === 'files' ? globToRegExp(args.pattern) : undefined;
  const fileGlob = args.glob ? globToRegExp(args.glob) : undefined;
  const flags =
    args.target === 'files'
      ? ['--files']
      : [
          '--line-number',
          '--no-heading',
          '--color',
          'never',
          '--with-filename',
          ...(args.caseInsensitive ? ['-i'] : []),
          '-e',
          args.pattern,
        ];
  if (args.glob && args.target === 'content') flags.push('--glob', args.glob);
  flags.push('--hidden', '--no-ignore', '--sort', 'path', ...skipped);
  return new Promise((resolve, reject) => {
    const child = spawn(rg, [...flags, '--', '.'], {
      cwd: args.root,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: args.signal,
    });
    const results: unknown[] = [];
    let buffered = '';
    let stderr = '';
    let done = false;
    const fromRoot = (file: string) => path.posix.normalize(file.split(path.sep).join('/'));
    const relative = (file: string) =>
      path.relative(args.relativeTo, path.join(args.root, file)).split(path.sep).join('/');
    const take = (line: string) => {
      if (done || line === '') return;
      if (args.target === 'files') {
        const name = fromRoot(line);
        if (fileGlob && !fileGlob.test(name)) return;
        if (nameGlob && !nameGlob.test(name)) return;
        results.push(relative(line));
      } else {
        const match = /^(.*?):(\d+):(.*)$/.exec(line);
        if (match)
          results.push({
            path: relative(match[1] as string),
            line: Number(match[2]),
            text: clip(match[3] as string),
          });
      }
      if (results.length > args.limit) {
        done = true;
        child.kill();
      }
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) take(line);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      take(buffered);
      // 0 = matches, 1 = none; 2 with a regex complaint = a pattern only JavaScript reads.
      if (!done && code !== 0 && code !== 1) {
        reject(
          /regex/i.test(stderr)
            ? new RipgrepPatternError(stderr.trim())
            : new Error(stderr.trim() || `ripgrep exited with ${code}`),
        );
        return;
      }
      const truncated = results.length > args.limit;
      resolve({ results: results.slice(0, args.limit), truncated });
    });
  });
}

/** ripgrep when it is on PATH (and takes the pattern), else the Node walk; same results either way. */
async function search(args: SearchArgs): Promise<{ results: unknown[]; truncated: boolean }> {
  const rg = await findRipgrep();
  if (rg === undefined) return searchWithNode(args);
  try {
    return await searchWithRipgrep(rg, args);
  } catch (error) {
    if (error instanceof RipgrepPatternError) return searchWithNode(args);
    throw error;
  }
}

export const searchFilesTool = defineTool({
  name: 'search_files',
  toolset: 'file',
  readOnly: true,
  description:
    "Search file contents by regex (target 'content', the default) or find files by glob (target 'files'). Results in path order; hidden files included; .git, node_modules, .hg and .svn skipped.",
  parameters: v.object({
    pattern: v.pipe(v.string(), v.minLength(1), v.description('Regex for content, glob for files')),
    target: v.optional(v.picklist(['content', 'files'])),
    path: v.optional(
      v.pipe(v.string(), v.description('Folder to search (default: the working directory)')),
    ),
    file_glob: v.optional(
      v.pipe(v.string(), v.description('Only files matching this glob (content search)')),
    ),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(SEARCH_MAX_LIMIT))),
    case_insensitive: v.optional(v.boolean()),
  }),
  async run(input, context) {
    const target = input.target ?? 'content';
    if (target === 'content') {
      try {
        new RegExp(input.pattern);
      } catch (error) {
        throw new Error(`Invalid regex: ${(error as Error).message}`);
      }
    }
    const args: SearchArgs = {
      pattern: input.pattern,
      target,
      root: resolveToolPath(context.cwd, input.path ?? '.'),
      relativeTo: context.cwd,
      glob: input.file_glob,
      limit: input.limit ?? SEARCH_DEFAULT_LIMIT,
      caseInsensitive: input.case_insensitive ?? false,
      signal: context.signal,
    };
    const { results, truncated } = await search(args);
    return target === 'files'
      ? { files: results, count: results.length, ...(truncated ? { truncated: true } : {}) }
      : { matches: results, count: results.length, ...(truncated ? { truncated: true } : {}) };
  },
});
