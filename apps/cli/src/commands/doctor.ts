import { chmodSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { applyEnvFile, getConfigPath, getEnvFilePath, loadConfig } from '@hermes/config';
import {
  getRunningPid,
  identifyGateway,
  pidFilePath,
  readPidRecord,
  resolveClientSocketPath,
} from '@hermes/control-socket';
import { checkStateDbIntegrity, SCHEMA_VERSION } from '@hermes/session-store';
import {
  findEmbeddedSecrets,
  probeLiveness,
  resolveSystemdTimeoutStopSec,
} from '@hermes/supervisor';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { count } from '../output/format.js';
import { openStore } from '../store.js';
import { drainSecondsFor } from './gateway/gateway-process.js';
import { serviceLocation } from './gateway/service.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface Finding {
  readonly check: string;
  readonly status: CheckStatus;
  readonly message: string;
  /** What to do about it (also what `--fix` did, when it did). */
  readonly fix?: string;
  readonly fixed?: boolean;
}

interface DoctorRun {
  readonly home: string;
  readonly fix: boolean;
  readonly offline: boolean;
  readonly findings: Finding[];
  add(finding: Finding): void;
}

const MODEL_PROBE_TIMEOUT_MS = 5000;

function modeOf(file: string): number | undefined {
  try {
    return statSync(file).mode & 0o777;
  } catch {
    return undefined;
  }
}

/** A file or folder only we should read: repair (with --fix) a mode that lets others in. */
function checkPrivate(
  run: DoctorRun,
  check: string,
  file: string,
  wanted: number,
  severity: 'warn' | 'fail',
) {
  const mode = modeOf(file);
  if (mode === undefined) return;
  if ((mode & 0o077) === 0) return;
  const octal = (value: number) => `0${value.toString(8)}`;
  let fixed = false;
  if (run.fix) {
    try {
      chmodSync(file, wanted);
      fixed = true;
    } catch {
      fixed = false;
    }
  }
  run.add({
    check,
    status: fixed ? 'ok' : severity,
    message: `${file} is mode ${octal(mode)}: other users can read it`,
    fix: fixed
      ? `changed to ${octal(wanted)}`
      : `chmod ${octal(wanted)} ${file} (or hermes doctor --fix)`,
    fixed,
  });
}

function checkHome(run: DoctorRun): void {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(run.home);
  } catch {
    run.add({
      check: 'home',
      status: 'warn',
      message: `${run.home} does not exist yet`,
      fix: 'It is created on first use (hermes chat, hermes gateway start)',
    });
    return;
  }
  if (!stats.isDirectory()) {
    run.add({
      check: 'home',
      status: 'fail',
      message: `${run.home} is not a folder`,
      fix: 'Move it aside, or set HERMES_HOME',
    });
    return;
  }
  if (process.getuid && stats.uid !== process.getuid()) {
    run.add({
      check: 'home',
      status: 'fail',
      message: `${run.home} belongs to uid ${stats.uid}, not to you (uid ${process.getuid()})`,
      fix: 'Run hermes as the owner, or chown the folder',
    });
    return;
  }
  const before = run.findings.length;
  checkPrivate(run, 'home', run.home, 0o700, 'warn');
  if (run.findings.length === before) run.add({ check: 'home', status: 'ok', message: run.home });
}

function checkConfig(run: DoctorRun): ReturnType<typeof loadConfig> | undefined {
  const file = getConfigPath(run.home);
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({ home: run.home });
  } catch (error) {
    run.add({
      check: 'config',
      status: 'fail',
      message: (error as Error).message,
      fix: 'Fix the file: hermes config edit',
    });
    return undefined;
  }
  if (loaded.warnings.length === 0) {
    run.add({
      check: 'config',
      status: 'ok',
      message: loaded.exists ? `${file} is valid` : 'no config.yaml (defaults apply)',
    });
  }
  for (const warning of loaded.warnings) {
    run.add({ check: 'config', status: 'warn', message: warning, fix: 'hermes config edit' });
  }
  checkPrivate(run, 'config', file, 0o600, 'warn');
  checkPrivate(run, 'secrets', getEnvFilePath(run.home), 0o600, 'fail');
  return loaded;
}

async function checkModel(
  run: DoctorRun,
  loaded: ReturnType<typeof loadConfig> | undefined,
): Promise<void> {
  if (!loaded) return;
  const { resolveRuntimeProvider } = await import('@hermes/agent');
  applyEnvFile(run.home);
  let route: ReturnType<typeof resolveRuntimeProvider>;
  try {
    route = resolveRuntimeProvider(loaded.config, { home: run.home });
  } catch (error) {
    run.add({
      check: 'model',
      status: 'warn',
      message: (error as Error).message,
      fix: 'Model turns fail until this is set',
    });
    return;
  }
  if (run.offline) {
    run.add({
      check: 'model',
      status: 'skip',
      message: `${route.model} via ${route.baseUrl} (not contacted: --offline)`,
    });
    return;
  }
  const url = `${route.baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await fetch(url, {
      headers: route.apiKey ? { authorization: `Bearer ${route.apiKey}` } : {},
      signal: AbortSignal.timeout(MODEL_PROBE_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    if (response.ok) {
      run.add({
        check: 'model',
        status: 'ok',
        message: `${route.model} via ${route.baseUrl} answers`,
      });
    } else if (response.status === 401 || response.status === 403) {
      run.add({
        check: 'model',
        status: 'fail',
        message: `${route.baseUrl} refused the API key (HTTP ${response.status})`,
        fix: `Check the key for provider ${route.provider} in ${getEnvFilePath(run.home)}`,
      });
    } else {
      run.add({
        check: 'model',
        status: 'warn',
        message: `${url} answered HTTP ${response.status} (some providers do not list models)`,
      });
    }
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    run.add({
      check: 'model',
      status: 'fail',
      message: timedOut
        ? `${route.baseUrl} did not answer within ${MODEL_PROBE_TIMEOUT_MS / 1000} s`
        : `${route.baseUrl} is unreachable (${cause ?? (error as Error).message})`,
      fix: 'Check model.base_url and the network; hermes config get model',
    });
  }
}

async function checkStateDb(run: DoctorRun): Promise<void> {
  const file = path.join(run.home, 'state.db');
  if (!existsSync(file)) {
    run.add({ check: 'state_db', status: 'ok', message: 'no state.db yet (created on first use)' });
    return;
  }
  // Read-only: a worker runs SQLite's quick_check on a read-only connection; nothing is migrated.
  let health: Awaited<ReturnType<typeof checkStateDbIntegrity>>;
  try {
    health = await checkStateDbIntegrity(file);
  } catch (error) {
    run.add({
      check: 'state_db',
      status: 'fail',
      message: (error as Error).message,
      fix: 'Check the file and its folder permissions',
    });
    return;
  }
  if (!health.ok) {
    run.add({
      check: 'state_db',
      status: 'fail',
      message: `${file} is damaged: ${health.problems.slice(0, 3).join('; ')}`,
      fix: `Stop every hermes process, move ${file} aside (it is never overwritten) and start again; sqlite3 ".recover" may save its data`,
    });
    return;
  }
  const version = health.schemaVersion ?? 0;
  if (version > SCHEMA_VERSION) {
    run.add({
      check: 'state_db',
      status: 'fail',
      message: `${file} has schema ${version}; this hermes knows ${SCHEMA_VERSION}`,
      fix: 'Update hermes: the file was written by a newer version',
    });
  } else {
    run.add({
      check: 'state_db',
      status: 'ok',
      message: `${file}: intact, schema ${version}${version < SCHEMA_VERSION ? ` (migrated to ${SCHEMA_VERSION} on next use)` : ''}, ${health.journalMode} journal`,
    });
  }
  checkPrivate(run, 'state_db', file, 0o600, 'warn');
  if (!health.ftsStale) {
    run.add({ check: 'search_index', status: 'ok', message: 'full-text index healthy' });
    return;
  }
  if (!run.fix) {
    run.add({
      check: 'search_index',
      status: 'warn',
      message: 'full-text index is stale; search falls back to a slower plain scan',
      fix: 'hermes doctor --fix (rebuilds it)',
    });
    return;
  }
  const store = await openStore(run.home);
  try {
    const rebuilt = await store.rebuildFts().catch(() => 0);
    run.add({
      check: 'search_index',
      status: rebuilt === 1 ? 'ok' : 'warn',
      message:
        rebuilt === 1
          ? 'full-text index rebuilt'
          : 'full-text index is stale; the rebuild was deferred (another process has state.db open)',
      fix: rebuilt === 1 ? 'rebuilt' : 'Stop the gateway and run hermes doctor --fix again',
      fixed: rebuilt === 1,
    });
  } finally {
    await store.close();
  }
}

async function checkGateway(run: DoctorRun): Promise<void> {
  const identity = await identifyGateway(run.home, { timeoutMs: 2000 });
  const pidFile = pidFilePath(run.home);
  const record = await readPidRecord(pidFile).catch(() => null);
  const pid =
    identity?.pid ?? (await getRunningPid(run.home, { cleanupStale: false }).catch(() => null));
  if (identity) {
    run.add({
      check: 'gateway',
      status: 'ok',
      message: `running (pid ${identity.pid}), answers on its control socket`,
    });
  } else if (pid !== null) {
    const liveness = await probeLiveness(run.home, { pid });
    run.add({
      check: 'gateway',
      status: liveness === 'wedged' ? 'fail' : 'warn',
      message:
        liveness === 'wedged'
          ? `the gateway (pid ${pid}) is wedged: its event loop stopped answering`
          : `the gateway (pid ${pid}) runs but does not answer on its control socket (liveness: ${liveness})`,
      fix: 'hermes gateway restart; see logs/gateway.log',
    });
  } else {
    run.add({ check: 'gateway', status: 'ok', message: 'not running' });
  }
  if (pid === null && (record !== null || existsSync(path.join(run.home, 'gateway.lock')))) {
    if (run.fix) await getRunningPid(run.home, { cleanupStale: true }).catch(() => null);
    const fixed = run.fix && !existsSync(pidFile);
    run.add({
      check: 'runtime_files',
      status: fixed ? 'ok' : 'warn',
      message: `stale PID files of a gateway that is gone${record ? ` (pid ${record.pid})` : ''}`,
      fix: fixed
        ? 'removed'
        : 'hermes doctor --fix removes them (a new gateway also takes them over)',
      fixed,
    });
  }
  const socket = path.join(run.home, 'gateway.sock');
  const resolved = await resolveClientSocketPath(run.home);
  if (!identity && (existsSync(socket) || resolved)) {
    let fixed = false;
    if (run.fix && pid === null) {
      rmSync(socket, { force: true });
      fixed = !existsSync(socket);
    }
    run.add({
      check: 'runtime_files',
      status: fixed ? 'ok' : 'warn',
      message: `a control socket file exists but nobody answers on it (${socket})`,
      fix: fixed
        ? 'removed'
        : pid === null
          ? 'hermes doctor --fix removes it'
          : 'hermes gateway restart',
      fixed,
    });
  }
}

async function checkServiceUnit(run: DoctorRun): Promise<void> {
  let location: ReturnType<typeof serviceLocation>;
  try {
    location = serviceLocation(run.home);
  } catch {
    return;
  }
  let text: string;
  try {
    text = readFileSync(location.file, 'utf8');
  } catch {
    run.add({
      check: 'service_unit',
      status: 'skip',
      message: `no service unit (${location.file})`,
    });
    return;
  }
  const secrets = findEmbeddedSecrets(text);
  if (secrets.length > 0) {
    run.add({
      check: 'service_unit',
      status: 'fail',
      message: `${location.file} embeds ${secrets.length} secret${secrets.length > 1 ? 's' : ''}: ${secrets.join(' | ')}`,
      fix: "Move them to the home's .env, then: hermes gateway install --force",
    });
  }
  const exec = /^ExecStart=(.*)$/m.exec(text)?.[1];
  const words = exec
    ? [...exec.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) =>
        (match[1] ?? '').replace(/\\(.)/g, '$1'),
      )
    : [];
  const missing = words.slice(0, 2).filter((word) => word.startsWith('/') && !existsSync(word));
  if (missing.length > 0) {
    run.add({
      check: 'service_unit',
      status: 'fail',
      message: `${location.file} runs ${missing.join(' and ')}, which no longer exist${missing.length > 1 ? '' : 's'}`,
      fix: 'hermes gateway install --force',
    });
  }
  const stopSec = /^TimeoutStopSec=(\d+)/m.exec(text)?.[1];
  if (location.manager === 'systemd' && stopSec !== undefined) {
    const required = resolveSystemdTimeoutStopSec({
      drainS: await drainSecondsFor(run.home, null),
    });
    if (Number(stopSec) < required) {
      run.add({
        check: 'service_unit',
        status: 'warn',
        message: `TimeoutStopSec=${stopSec} is below the ${required} s the drain needs`,
        fix: 'hermes gateway install --force',
      });
    }
  }
  if (!run.findings.some((finding) => finding.check === 'service_unit')) {
    run.add({
      check: 'service_unit',
      status: 'ok',
      message: `${location.file} has no secrets and current paths`,
    });
  }
}

export async function doctorCommand(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const findings: Finding[] = [];
  const run: DoctorRun = {
    home: context.home,
    fix: options.fix === true,
    offline: options.offline === true,
    findings,
    add: (finding) => findings.push(finding),
  };
  checkHome(run);
  const loaded = checkConfig(run);
  await checkModel(run, loaded);
  await checkStateDb(run);
  await checkGateway(run);
  await checkServiceUnit(run);
  const failed = findings.some((finding) => finding.status === 'fail');
  const { output } = context;
  if (output.json) {
    output.printJson({ ok: !failed, home: context.home, checks: findings });
    return failed ? EXIT.failure : EXIT.ok;
  }
  const styles = output.styles;
  const mark: Record<CheckStatus, string> = {
    ok: styles.green('✓'),
    warn: styles.yellow('!'),
    fail: styles.red('✗'),
    skip: styles.dim('-'),
  };
  for (const finding of findings) {
    output.line(
      `${mark[finding.status]} ${styles.bold(finding.check.padEnd(13))} ${finding.message}`,
    );
    if (finding.fix && finding.status !== 'ok') output.line(`  ${styles.dim(`→ ${finding.fix}`)}`);
    else if (finding.fixed) output.line(`  ${styles.dim(`fixed: ${finding.fix}`)}`);
  }
  const counts = (status: CheckStatus) =>
    findings.filter((finding) => finding.status === status).length;
  output.line();
  output.line(
    failed
      ? styles.red(`${count(counts('fail'), 'problem needs', 'problems need')} attention.`)
      : counts('warn') > 0
        ? styles.yellow(`No problems; ${count(counts('warn'), 'warning')}.`)
        : styles.green('Everything looks fine.'),
  );
  return failed ? EXIT.failure : EXIT.ok;
}
