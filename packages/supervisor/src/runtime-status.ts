import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '@hermes/config';
import { GATEWAY_SERVICE_RESTART_EXIT_CODE } from './constants.js';

export interface MarkExitedOptions {
  /** The `gateway_state.json` to update. */
  readonly file: string;
  readonly exitCode: number;
  /** `loop_liveness_watchdog` or `shutdown_watchdog`. */
  readonly reason: string;
}

function readRecord(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // a missing or corrupt record is replaced
  }
  return {};
}

/**
 * Marks the runtime status `degraded` with the exit reason, synchronously, on an exit path that
 * cannot wait for the event loop. It merges into the existing record (other writers own the rest of
 * it) and never throws: the exit that follows matters more than the record.
 */
export function markRuntimeStatusExitedSync(options: MarkExitedOptions): boolean {
  try {
    const record = readRecord(options.file);
    record.gateway_state = 'degraded';
    record.exit_reason = options.reason;
    record.restart_requested = options.exitCode === GATEWAY_SERVICE_RESTART_EXIT_CODE;
    record.pid = process.pid;
    record.updated_at = new Date().toISOString();
    mkdirSync(path.dirname(options.file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(options.file, JSON.stringify(record));
    return true;
  } catch {
    return false;
  }
}
