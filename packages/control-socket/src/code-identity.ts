import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodeIdentity } from './runtime-status.js';

/** Environment variable that names the running code's commit (a packaged build can set it). */
export const CODE_SHA_ENV = 'HERMES_CODE_SHA';

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export interface ReadCodeIdentityOptions {
  /** A file or folder of the running code (`import.meta.url` works); the checkout is found above it. */
  readonly from: string | URL;
  /** The package version to report. */
  readonly version: string | null;
  /** Read for `HERMES_CODE_SHA` (default `process.env`), which wins over the checkout. */
  readonly env?: NodeJS.ProcessEnv;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The git folder of the checkout holding `start` (a `.git` folder, or a worktree's `.git` file). */
function findGitDir(start: string): string | null {
  let directory = start;
  for (;;) {
    const candidate = path.join(directory, '.git');
    try {
      const stats = statSync(candidate);
      if (stats.isDirectory()) return candidate;
      if (stats.isFile()) {
        const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readText(candidate) ?? '');
        return pointer ? path.resolve(directory, pointer[1] as string) : null;
      }
    } catch {}
    const parent = path.dirname(directory);
    if (parent === directory) return null;
    directory = parent;
  }
}

/** The commit `HEAD` of a git folder names, read from its files (no `git` process). */
function readHeadSha(gitDir: string): string | null {
  const head = readText(path.join(gitDir, 'HEAD'))?.trim();
  if (head === undefined) return null;
  if (SHA.test(head)) return head;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (ref === undefined || ref.includes('..')) return null;
  // A linked worktree keeps its refs in the main repository (`commondir`).
  const common = readText(path.join(gitDir, 'commondir'))?.trim();
  const refDirs = common ? [gitDir, path.resolve(gitDir, common)] : [gitDir];
  for (const directory of refDirs) {
    const loose = readText(path.join(directory, ref))?.trim();
    if (loose !== undefined && SHA.test(loose)) return loose;
    for (const line of (readText(path.join(directory, 'packed-refs')) ?? '').split('\n')) {
      const [sha, name] = line.trim().split(' ');
      if (name === ref && sha !== undefined && SHA.test(sha)) return sha;
    }
  }
  return null;
}

/**
 * The running code's identity for `identify`, runtime status and `hermes update --plan`:
 * `HERMES_CODE_SHA` when set, else the commit checked out where the code lives (a source
 * checkout), else `null` (an npm install). Read once at start by a gateway; the CLI reads it
 * fresh to compare. Never throws.
 */
export function readCodeIdentity(options: ReadCodeIdentityOptions): CodeIdentity {
  const fromEnv = (options.env ?? process.env)[CODE_SHA_ENV]?.trim();
  if (fromEnv) return { sha: fromEnv, version: options.version };
  let start: string;
  try {
    start =
      options.from instanceof URL || String(options.from).startsWith('file:')
        ? fileURLToPath(options.from)
        : String(options.from);
  } catch {
    return { sha: null, version: options.version };
  }
  const gitDir = findGitDir(path.resolve(start));
  return { sha: gitDir === null ? null : readHeadSha(gitDir), version: options.version };
}
