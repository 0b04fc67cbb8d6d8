import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A real git repository in a temporary folder, for tests. */
export interface TempRepository {
  readonly path: string;
  git(...args: string[]): string;
  write(file: string, content: string): void;
  commit(message: string, files: Record<string, string>): string;
  remove(): void;
}

export function tempRepository(options: { initialBranch?: string } = {}): TempRepository {
  const path = mkdtempSync(join(tmpdir(), 'review-git-'));
  const environment = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: path,
      env: environment,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  git('init', '--quiet', `--initial-branch=${options.initialBranch ?? 'main'}`);
  git('config', 'commit.gpgsign', 'false');
  const write = (file: string, content: string) => {
    mkdirSync(dirname(join(path, file)), { recursive: true });
    writeFileSync(join(path, file), content);
  };
  return {
    path,
    git,
    write,
    commit(message, files) {
      for (const [file, content] of Object.entries(files)) write(file, content);
      git('add', '--all');
      git('commit', '--quiet', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD').trim();
    },
    remove() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}
