import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ancestorNodeModules, readJson, sha256, writeJson } from './cache.js';
import type { Tarball } from './pack.js';

/** Bump when the scratch project's layout changes, so an old install is not reused. */
const SCRATCH_LAYOUT_VERSION = 1;

/**
 * The registry npm is given for the `@hermes` scope while it installs: a server on loopback that
 * answers 404 to everything at once (a dead port would make npm retry for minutes) and records
 * what was asked. The scratch project must get every `@hermes/*` package from the tarballs just
 * packed, never from npm.
 */
export async function startRefusingRegistry(): Promise<{
  url: string;
  lookups: Set<string>;
  close: () => Promise<void>;
}> {
  const lookups = new Set<string>();
  const server = createServer((request, response) => {
    const name = decodeURIComponent((request.url ?? '/').slice(1).split('/-/')[0] ?? '');
    if (name) lookups.add(name);
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"Not found: @hermes packages come from the workspace tarballs"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    lookups,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface ThirdPartyPin {
  readonly name: string;
  readonly version: string;
}

export interface ScratchInstall {
  readonly directory: string;
  /** Changes whenever anything the install depends on changes (tarballs, pins, Node, npm). */
  readonly key: string;
  readonly reused: boolean;
  readonly notes: readonly string[];
}

/** npm without the `npm_config_*` settings pnpm exports to the scripts it runs. */
export function cleanEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(config|package|lifecycle)_/i.test(key) || key === 'npm_execpath') continue;
    if (/^(NODE_OPTIONS|NODE_PATH|INIT_CWD|PNPM_.*)$/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...extra };
}

function npmSync(args: readonly string[], cwd: string): { status: number; output: string } {
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    cwd,
    encoding: 'utf8',
    env: cleanEnvironment(),
    maxBuffer: 64 * 1024 * 1024,
    shell: process.platform === 'win32',
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

/** npm without blocking the event loop (the refusing registry answers from this process). */
function npm(args: readonly string[], cwd: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
      cwd,
      env: cleanEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? 1, output }));
  });
}

export function npmVersion(): string {
  const result = npmSync(['--version'], process.cwd());
  return result.output.trim();
}

/** Package folders under a node_modules tree, nested ones included. */
function packageFolders(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const folders: string[] = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const full = path.join(nodeModules, entry);
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(full)) {
        const folder = path.join(full, scoped);
        folders.push(folder, ...packageFolders(path.join(folder, 'node_modules')));
      }
    } else {
      folders.push(full, ...packageFolders(path.join(full, 'node_modules')));
    }
  }
  return folders;
}

/** The addon binaries node-gyp leaves in `build/Release` (intermediate objects excluded). */
function releaseAddons(folder: string): string[] {
  const release = path.join(folder, 'build', 'Release');
  if (!existsSync(release)) return [];
  return readdirSync(release)
    .filter((file) => file.endsWith('.node'))
    .map((file) => path.join(release, file));
}

/**
 * The same package and version, already built by the workspace's own install (pnpm's virtual
 * store), so a native addon need not be compiled again for the scratch project.
 */
function workspaceBuild(root: string, name: string, version: string): string | undefined {
  const store = path.join(root, 'node_modules', '.pnpm');
  if (!existsSync(store)) return undefined;
  const prefix = `${name.replace('/', '+')}@${version}`;
  for (const entry of readdirSync(store)) {
    if (entry !== prefix && !entry.startsWith(`${prefix}_`)) continue;
    const folder = path.join(store, entry, 'node_modules', name);
    if (releaseAddons(folder).length > 0) return folder;
  }
  return undefined;
}

/**
 * Loads each binary in a fresh Node process. A file that is not a Node addon at all (better-sqlite3
 * also builds a SQLite test extension) "did not self-register" and is skipped; any other failure —
 * an ABI mismatch above all — fails, and at least one addon must load.
 */
function addonsLoad(files: readonly string[], cwd: string): boolean {
  const script = `let loaded = 0;
for (const file of ${JSON.stringify(files)}) {
  try { require(file); loaded += 1; }
  catch (error) { if (!/did not self-register/.test(String(error && error.message))) process.exit(1); }
}
process.exit(loaded > 0 ? 0 : 1);`;
  const result = spawnSync(process.execPath, ['-e', script], { cwd, env: cleanEnvironment() });
  return result.status === 0;
}

/**
 * Install scripts are skipped during `npm install` and handled here: a native addon (binding.gyp)
 * whose exact version the workspace has already built gets that build's `.node` files, verified
 * by loading them in a fresh Node process (same Node, same ABI, same machine — what compiling
 * again would produce, without the minute better-sqlite3 takes); anything else, or an addon whose
 * copy does not load, runs its own install scripts through `npm rebuild`.
 */
async function runInstallScripts(root: string, directory: string, notes: string[]): Promise<void> {
  for (const folder of packageFolders(path.join(directory, 'node_modules'))) {
    const manifest = readJson<{ name: string; version: string; scripts?: Record<string, string> }>(
      path.join(folder, 'package.json'),
    );
    if (!manifest) continue;
    const scripts = manifest.scripts ?? {};
    const native = existsSync(path.join(folder, 'binding.gyp'));
    if (!native && !scripts.preinstall && !scripts.install && !scripts.postinstall) continue;
    const label = `${manifest.name}@${manifest.version}`;
    if (native) {
      const built = workspaceBuild(root, manifest.name, manifest.version);
      if (built) {
        const copied = releaseAddons(built).map((file) => {
          const target = path.join(folder, path.relative(built, file));
          mkdirSync(path.dirname(target), { recursive: true });
          copyFileSync(file, target);
          return target;
        });
        if (addonsLoad(copied, directory)) {
          notes.push(`${label}: native addon reused from the workspace's build`);
          continue;
        }
        for (const file of copied) rmSync(file, { force: true });
      }
      notes.push(`${label}: compiling the native addon (no loadable workspace build)`);
    }
    const relative = path.relative(path.join(directory, 'node_modules'), folder);
    const rebuilt = await npm(['rebuild', manifest.name, '--ignore-scripts=false'], directory);
    if (rebuilt.status !== 0) {
      throw new Error(
        `npm rebuild ${manifest.name} (${relative}) failed:\n${rebuilt.output.trim()}`,
      );
    }
  }
}

export interface ScratchOptions {
  readonly root: string;
  readonly directory: string;
  readonly tarballs: readonly Tarball[];
  readonly pins: readonly ThirdPartyPin[];
  readonly npmVersion: string;
  readonly useCache: boolean;
}

/**
 * A project outside the workspace that installs every tarball with npm, as a stranger would:
 * no workspace links, `@hermes/*` only from the tarballs (overrides, plus a registry for the scope that
 * refuses every lookup), third-party packages from the registry or npm's cache at the versions the workspace's
 * lockfile resolved (so the check tests what the workspace tests). Reused while its inputs are
 * unchanged; an input change runs `npm install` again over the previous tree.
 */
export async function prepareScratchProject(options: ScratchOptions): Promise<ScratchInstall> {
  const { directory, tarballs, pins } = options;
  const outside = ancestorNodeModules(directory);
  if (outside) {
    throw new Error(
      `the scratch project ${directory} would resolve packages from ${outside}; set HERMES_PACK_CHECK_CACHE to a folder outside any node_modules tree`,
    );
  }
  mkdirSync(directory, { recursive: true });
  const dependencies: Record<string, string> = {};
  const overrides: Record<string, string> = {};
  for (const tarball of tarballs) {
    dependencies[tarball.name] =
      `file:${path.relative(directory, tarball.file).split(path.sep).join('/')}`;
    overrides[tarball.name] = `$${tarball.name}`;
  }
  for (const pin of pins) dependencies[pin.name] ??= pin.version;
  const manifest = `${JSON.stringify(
    {
      name: 'hermes-pack-check-scratch',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(Object.entries(dependencies).sort()),
      overrides,
    },
    null,
    2,
  )}\n`;
  const npmrc = 'audit=false\nfund=false\nupdate-notifier=false\n';
  const key = sha256(
    [
      SCRATCH_LAYOUT_VERSION,
      manifest,
      npmrc,
      process.version,
      options.npmVersion,
      process.platform,
      process.arch,
    ].join('\0'),
  );
  const stateFile = path.join(directory, '.pack-check-install.json');
  const state = readJson<{ key: string }>(stateFile);
  const notes: string[] = [];
  if (options.useCache && state?.key === key && existsSync(path.join(directory, 'node_modules'))) {
    return { directory, key, reused: true, notes };
  }
  rmSync(stateFile, { force: true });
  writeFileSync(path.join(directory, 'package.json'), manifest);
  writeFileSync(path.join(directory, '.npmrc'), npmrc);
  if (!options.useCache) {
    rmSync(path.join(directory, 'node_modules'), { recursive: true, force: true });
    rmSync(path.join(directory, 'package-lock.json'), { force: true });
  }
  const registry = await startRefusingRegistry();
  try {
    const install = [
      'install',
      '--ignore-scripts',
      '--prefer-offline',
      '--loglevel=error',
      `--@hermes:registry=${registry.url}`,
    ];
    let result = await npm(install, directory);
    if (
      result.status !== 0 &&
      registry.lookups.size === 0 &&
      existsSync(path.join(directory, 'node_modules'))
    ) {
      // A tree left by an older layout or an interrupted run: start over once from nothing.
      rmSync(path.join(directory, 'node_modules'), { recursive: true, force: true });
      rmSync(path.join(directory, 'package-lock.json'), { force: true });
      result = await npm(install, directory);
    }
    if (registry.lookups.size > 0) {
      throw new Error(
        `npm asked a registry for ${[...registry.lookups].sort().join(', ')}: every @hermes package must come from a tarball of this workspace (a dependency on a private or missing package?)`,
      );
    }
    if (result.status !== 0) {
      throw new Error(`npm install of the tarballs failed:\n${result.output.trim()}`);
    }
  } finally {
    await registry.close();
  }
  await runInstallScripts(options.root, directory, notes);
  verifyInstalledFromTarballs(directory, tarballs);
  writeJson(stateFile, { key });
  return { directory, key, reused: false, notes };
}

/** Every `@hermes/*` package in the tree is a real folder holding exactly its tarball's manifest. */
function verifyInstalledFromTarballs(directory: string, tarballs: readonly Tarball[]): void {
  for (const tarball of tarballs) {
    const folder = path.join(directory, 'node_modules', ...tarball.name.split('/'));
    if (!existsSync(folder) || lstatSync(folder).isSymbolicLink()) {
      throw new Error(`${tarball.name} is not installed as a folder in the scratch project`);
    }
    const installed = readFileSync(path.join(folder, 'package.json'));
    const packed = tarball.files.get('package.json');
    if (!packed || !installed.equals(Buffer.from(packed))) {
      throw new Error(`${tarball.name} in the scratch project is not the tarball just packed`);
    }
  }
}
