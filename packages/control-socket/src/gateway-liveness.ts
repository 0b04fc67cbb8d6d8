import { type GatewayCommandLinePredicate, isGatewayCommandLine } from './gateway-command-line.js';
import { type PidRecord, parsePidRecord } from './pid-record.js';
import {
  isProcessAlive,
  isRecordedProcessLive,
  readProcessCommandLine,
} from './process-identity.js';

export interface GatewayLivenessOptions {
  /**
   * Whether a live process's command line is a gateway's (default `isGatewayCommandLine`: the
   * `hermes-gateway` bin or `hermes gateway run|restart`). A program that embeds the gateway under
   * its own command line passes a predicate that recognises it.
   */
  readonly isGatewayCommandLine?: GatewayCommandLinePredicate;
}

/**
 * `pid` is a live gateway: it runs, it is still the process that recorded `startTime` (when one
 * was recorded), and its command line is a gateway's — this process excepted, which asks about
 * itself only for a record it wrote. A PID reused by an unrelated process therefore never holds a
 * home, even when the record has no start time to tell. A command line that cannot be read (a
 * hidden `/proc`, no `ps`) proves nothing either way: the process keeps the home, as a live
 * process always did before this check.
 */
export async function isLiveGatewayProcess(
  pid: number,
  startTime: number | null | undefined,
  options: GatewayLivenessOptions = {},
): Promise<boolean> {
  if (!(await isRecordedProcessLive(pid, startTime))) return false;
  if (pid === process.pid) return true;
  const argv = await readProcessCommandLine(pid);
  // Unreadable: gone since the first check (dead), or hidden from us (fail closed: held).
  if (argv === null) return isProcessAlive(pid);
  return (options.isGatewayCommandLine ?? isGatewayCommandLine)(argv);
}

/** A PID record whose process is a live gateway (see `isLiveGatewayProcess`). */
export async function pidRecordNamesLiveGateway(
  record: PidRecord | null,
  options: GatewayLivenessOptions = {},
): Promise<boolean> {
  return record !== null && isLiveGatewayProcess(record.pid, record.start_time, options);
}

/** PID-file text that names no live gateway (unparseable text names none): safe to take over. */
export async function pidRecordTextNamesNoGateway(
  text: string,
  options: GatewayLivenessOptions = {},
): Promise<boolean> {
  return !(await pidRecordNamesLiveGateway(parsePidRecord(text), options));
}
