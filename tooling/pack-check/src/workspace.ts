import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface WorkspacePackage {
  readonly name: string;
  readonly version: string;
  readonly directory: string;
  readonly private: boolean;
}

/**
 * How to call the workspace's pnpm: under `pnpm <script>` (also `npx pnpm@… test`),
 * `npm_execpath` is pnpm's own entry file, so the pinned pnpm runs, not whatever is on PATH.
 */
export function pnpmCommand(env: NodeJS.ProcessEnv = process.env): {
  command: string;
  prefix: string[];
} {
  const entry = env.npm_execpath ?? '';
  return /pnpm/.test(path.basename(entry)) && /\.(c?js|mjs)$/.test(entry)
    ? { command: process.execPath, prefix: [entry] }
    : { command: 'pnpm', prefix: [] };
}

export function runPnpm(
  args: readonly string[],
  options: SpawnSyncOptions & { cwd: string },
): { stdout: string; stderr: string } {
  const { command, prefix } = pnpmCommand();
  const result = spawnSync(command, [...prefix, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    ...options,
    env: { ...process.env, npm_config_update_notifier: 'false', ...options.env },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `pnpm ${args.join(' ')} exited with ${result.status}:\n${String(result.stderr || result.stdout).trim()}`,
    );
  }
  return { stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Every workspace package, as pnpm sees the workspace (so new packages join with no edit). */
export function listWorkspacePackages(root: string): WorkspacePackage[] {
  const { stdout } = runPnpm(['ls', '--recursive', '--depth', '-1', '--json'], { cwd: root });
  const entries = JSON.parse(stdout) as {
    name?: string;
    version?: string;
    path: string;
    private?: boolean;
  }[];
  return entries
    .filter((entry) => path.resolve(entry.path) !== path.resolve(root) && entry.name)
    .map((entry) => ({
      name: entry.name as string,
      version: entry.version ?? '0.0.0',
      directory: entry.path,
      private: entry.private === true,
    }))
    .sort((left, right) => left.name.localeCompare(right.name));
}

export type Bump = 'major' | 'minor' | 'patch' | 'none';

/** The releases one changeset file asks for: its front matter lines `"name": bump`. */
export function parseChangeset(text: string): Map<string, Bump> {
  const bumps = new Map<string, Bump>();
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text.trimStart());
  for (const line of (match?.[1] ?? '').split(/\r?\n/)) {
    const entry = /^\s*["']?([^"':]+?)["']?\s*:\s*(major|minor|patch|none)\s*$/.exec(line);
    if (entry?.[1] && entry[2]) bumps.set(entry[1], entry[2] as Bump);
  }
  return bumps;
}

const BUMP_ORDER: readonly Bump[] = ['none', 'patch', 'minor', 'major'];

/** The highest bump each package gets from the pending changesets in `.changeset/`. */
export function pendingBumps(root: string): Map<string, { bump: Bump; files: string[] }> {
  const folder = path.join(root, '.changeset');
  const result = new Map<string, { bump: Bump; files: string[] }>();
  if (!existsSync(folder)) return result;
  for (const file of readdirSync(folder).sort()) {
    if (!file.endsWith('.md') || file === 'README.md') continue;
    for (const [name, bump] of parseChangeset(readFileSync(path.join(folder, file), 'utf8'))) {
      const current = result.get(name);
      const highest =
        current && BUMP_ORDER.indexOf(current.bump) >= BUMP_ORDER.indexOf(bump)
          ? current.bump
          : bump;
      result.set(name, { bump: highest, files: [...(current?.files ?? []), file] });
    }
  }
  return result;
}

export function bumpVersion(version: string, bump: Exclude<Bump, 'none'>): string {
  const [major = 0, minor = 0, patch = 0] = version
    .split(/[-+]/)[0]
    ?.split('.')
    .map((part) => Number.parseInt(part, 10)) ?? [0, 0, 0];
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

/**
 * The version plan (docs/releasing.md): a package that changesets has never released (no
 * CHANGELOG.md yet) sits at 0.0.0 with a pending `minor` changeset, so its first release is
 * exactly 0.1.0 — not 0.0.1, not a skipped 0.1.0 that goes straight to 0.2.0.
 */
export function firstReleaseProblem(
  workspacePackage: WorkspacePackage,
  pending: ReadonlyMap<string, { bump: Bump; files: string[] }>,
): string | undefined {
  if (existsSync(path.join(workspacePackage.directory, 'CHANGELOG.md'))) return undefined;
  const { name, version } = workspacePackage;
  const bump = pending.get(name)?.bump;
  if (version !== '0.0.0') {
    const first = bump && bump !== 'none' ? bumpVersion(version, bump) : version;
    return `version plan: ${name} has never been released (no CHANGELOG.md) but is at ${version}, so its first release would be ${first}. Set "version": "0.0.0" and give it a minor changeset, so the first release is 0.1.0 (docs/releasing.md).`;
  }
  if (bump === 'minor') return undefined;
  if (!bump || bump === 'none') {
    return `version plan: ${name} is at 0.0.0 with no pending changeset, so a release would publish 0.0.0. Add .changeset/${name.replace(/^@[^/]+\//, '')}-initial.md with "${name}": minor (docs/releasing.md).`;
  }
  return `version plan: ${name}'s first release would be ${bumpVersion(version, bump)} (its pending changesets ask for ${bump}); first releases are 0.1.0 — make its changeset minor (docs/releasing.md).`;
}
