import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readCodeIdentity } from './code-identity.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(): string {
  const folder = realpathSync(mkdtempSync(path.join(tmpdir(), 'hermes-code-identity-')));
  folders.push(folder);
  return folder;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();
}

/** A real repository with one commit and a built file two folders down. */
function checkout(): { root: string; file: string; sha: string } {
  const root = tempFolder();
  git(root, 'init', '-q', '-b', 'main');
  mkdirSync(path.join(root, 'apps/gateway/dist'), { recursive: true });
  const file = path.join(root, 'apps/gateway/dist/bin.js');
  writeFileSync(file, '// built\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'first');
  return { root, file, sha: git(root, 'rev-parse', 'HEAD') };
}

describe('readCodeIdentity', () => {
  it('names the commit checked out above the running file (a file URL, as import.meta.url)', () => {
    const { file, sha } = checkout();
    expect(readCodeIdentity({ from: pathToFileURL(file), version: '1.2.3', env: {} })).toEqual({
      sha,
      version: '1.2.3',
    });
  });

  it('follows a new commit, packed refs and a detached HEAD', () => {
    const { root, file } = checkout();
    writeFileSync(path.join(root, 'more.txt'), 'x');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'second');
    const second = git(root, 'rev-parse', 'HEAD');
    expect(readCodeIdentity({ from: file, version: null, env: {} }).sha).toBe(second);
    git(root, 'pack-refs', '--all');
    expect(readCodeIdentity({ from: file, version: null, env: {} }).sha).toBe(second);
    git(root, 'checkout', '-q', '--detach', 'HEAD~1');
    expect(readCodeIdentity({ from: file, version: null, env: {} }).sha).toBe(
      git(root, 'rev-parse', 'HEAD'),
    );
  });

  it('reads a linked worktree through its .git file and the main repository’s refs', () => {
    const { root } = checkout();
    const worktree = path.join(tempFolder(), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'side', worktree);
    writeFileSync(path.join(worktree, 'side.txt'), 'x');
    git(worktree, 'add', '.');
    git(worktree, 'commit', '-q', '-m', 'side');
    expect(readCodeIdentity({ from: worktree, version: null, env: {} }).sha).toBe(
      git(worktree, 'rev-parse', 'HEAD'),
    );
  });

  it('answers null outside a checkout (an npm install) and lets HERMES_CODE_SHA win', () => {
    const folder = tempFolder();
    expect(readCodeIdentity({ from: folder, version: '1.0.0', env: {} })).toEqual({
      sha: null,
      version: '1.0.0',
    });
    const { file } = checkout();
    expect(
      readCodeIdentity({ from: file, version: null, env: { HERMES_CODE_SHA: ' abc123 ' } }).sha,
    ).toBe('abc123');
  });

  it('answers null for a HEAD naming a ref that does not exist yet (a fresh repository)', () => {
    const root = tempFolder();
    git(root, 'init', '-q', '-b', 'main');
    expect(readCodeIdentity({ from: root, version: null, env: {} }).sha).toBeNull();
  });
});
