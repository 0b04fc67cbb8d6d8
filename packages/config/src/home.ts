import { AsyncLocalStorage } from 'node:async_hooks';
import { homedir } from 'node:os';
import path from 'node:path';

/** What a scope carries: the profile home and, optionally, that profile's secrets. */
export interface HomeScope {
  readonly home: string;
  /**
   * The profile's secrets (its `.env`, already parsed). When present, `getSecret` answers from
   * this map only and never falls back to `process.env`, so one profile can never read another
   * profile's credentials.
   */
  readonly secrets?: Readonly<Record<string, string>>;
}

const scopeStorage = new AsyncLocalStorage<HomeScope>();

/** `~/.hermes` on POSIX, `%LOCALAPPDATA%\hermes` on Windows. */
export function getPlatformDefaultHome(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (platform === 'win32') {
    const localAppData = env.LOCALAPPDATA?.trim();
    const base = localAppData ? localAppData : path.win32.join(homedir(), 'AppData', 'Local');
    return path.win32.join(base, 'hermes');
  }
  return path.join(userHomeDirectory(platform, env), '.hermes');
}

/**
 * The user's own folder, as `~` means it: `HOME` (`USERPROFILE` on Windows) from `env`, else
 * `os.homedir()`. Read from the given environment first, so a scoped env (or a test) decides, as
 * `os.homedir()` would for the real process environment.
 */
function userHomeDirectory(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string {
  const fromEnv = platform === 'win32' ? env.USERPROFILE : env.HOME;
  return fromEnv?.trim() || homedir();
}

/**
 * Expands a leading `~` for the current user: `~` alone, `~/rest` (and `~\rest` on Windows). This
 * is the one rule for `~` in a home path, used for `HERMES_HOME`, `withHome` and every package that
 * names a home (the control socket hashes the same path). `~user` forms and a `~` anywhere else
 * are left as written.
 */
export function expandUserHome(
  value: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (value === '~') return userHomeDirectory(platform, env);
  const separatorFollows =
    value.startsWith('~/') || (platform === 'win32' && value.startsWith('~\\'));
  if (!separatorFollows) return value;
  const join = platform === 'win32' ? path.win32.join : path.join;
  return join(userHomeDirectory(platform, env), value.slice(2));
}

/** A home path as every Hermes package reads it: `~` expanded (`expandUserHome`), then absolute. */
export function resolveHomePath(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(expandUserHome(value, env));
}

function envHome(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.HERMES_HOME?.trim();
  return value ? resolveHomePath(value, env) : undefined;
}

/**
 * The home the current task works in: the per-task override (see `withHome`), then
 * `HERMES_HOME`, then the platform default.
 */
export function getHermesHome(): string {
  return getHomeOverride() ?? getProcessHermesHome();
}

/**
 * The home of the process itself, ignoring any per-task override. Identity files (PID file,
 * lock, runtime status, control socket) always live here.
 */
export function getProcessHermesHome(env: NodeJS.ProcessEnv = process.env): string {
  return envHome(env) ?? getPlatformDefaultHome(process.platform, env);
}

/** The per-task home override, or `undefined` outside any `withHome` scope. */
export function getHomeOverride(): string | undefined {
  return scopeStorage.getStore()?.home;
}

/** The active scope (home + optional secrets), or `undefined` outside any scope. */
export function getHomeScope(): HomeScope | undefined {
  return scopeStorage.getStore();
}

/**
 * Runs `fn` with `home` as the current home for everything it awaits. The override follows the
 * task across awaits and never leaks into concurrent tasks. It does not cross into worker threads
 * or child processes: pass the home to those explicitly.
 */
export function withHome<T>(home: string, fn: () => T): T {
  return scopeStorage.run({ home: resolveHomePath(home) }, fn);
}

/** Like `withHome`, but also installs an isolated secret map for the scope (see `getSecret`). */
export function withHomeScope<T>(scope: HomeScope, fn: () => T): T {
  const resolved: HomeScope = scope.secrets
    ? { home: resolveHomePath(scope.home), secrets: { ...scope.secrets } }
    : { home: resolveHomePath(scope.home) };
  return scopeStorage.run(resolved, fn);
}

/**
 * Reads a secret: from the scope's secret map when the current scope has one (a miss is a miss,
 * never a fall back to the process environment), otherwise from `process.env`.
 */
export function getSecret(name: string): string | undefined {
  const scope = scopeStorage.getStore();
  if (scope?.secrets) {
    return Object.hasOwn(scope.secrets, name) ? scope.secrets[name] : undefined;
  }
  const value = process.env[name];
  return value === '' ? undefined : value;
}

/**
 * The root that named profiles hang off: the platform default, unless `HERMES_HOME` points
 * elsewhere. `HERMES_HOME=<root>/profiles/<name>` anchors at `<root>`; any other custom home is
 * its own root. The per-task override never moves the root.
 */
export function getDefaultHermesRoot(env: NodeJS.ProcessEnv = process.env): string {
  const native = getPlatformDefaultHome(process.platform, env);
  const custom = envHome(env);
  if (!custom) return native;
  if (isSameOrInside(custom, native)) return native;
  const parent = path.dirname(custom);
  if (path.basename(parent) === 'profiles') return path.dirname(parent);
  return custom;
}

function isSameOrInside(candidate: string, root: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
