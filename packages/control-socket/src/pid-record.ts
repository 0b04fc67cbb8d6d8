import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { GATEWAY_KIND } from './constants.js';
import { isRecordedProcessLive } from './process-identity.js';

/** `gateway.pid` / `gateway.lock` content. Only `pid` is required: legacy files hold a bare number. */
export const PidRecordSchema = v.looseObject({
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  kind: v.optional(v.string()),
  argv: v.optional(v.array(v.string())),
  start_time: v.optional(v.nullable(v.number())),
  hermes_home: v.optional(v.string()),
});
export type PidRecord = v.InferOutput<typeof PidRecordSchema>;

/** Parses PID-file text: a JSON record or a legacy bare integer. Anything else ⇒ `null`. */
export function parsePidRecord(text: string): PidRecord | null {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') return null;
  if (/^\d+$/.test(trimmed)) {
    const pid = Number(trimmed);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid } : null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return null;
  }
  const result = v.safeParse(PidRecordSchema, parsed);
  return result.success ? result.output : null;
}

/** The record's process is running and, when a start time was recorded, is still that process. */
export async function pidRecordIsLive(record: PidRecord | null): Promise<boolean> {
  return record !== null && (await isRecordedProcessLive(record.pid, record.start_time));
}

/** PID-file text that names no live process (unparseable text names none): safe to take over. */
export async function pidRecordTextIsStale(text: string): Promise<boolean> {
  return !(await pidRecordIsLive(parsePidRecord(text)));
}

/** Reads and parses a PID record file; `null` when missing, unreadable or invalid. */
export async function readPidRecord(file: string): Promise<PidRecord | null> {
  try {
    return parsePidRecord(await readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

export interface PidRecordInput {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly startTime: number | null;
  /** The canonical absolute process home. */
  readonly home: string;
}

/** The record this process writes: `{ pid, kind, argv, start_time, hermes_home }`. */
export function buildPidRecord(input: PidRecordInput): PidRecord {
  return {
    pid: input.pid,
    kind: GATEWAY_KIND,
    argv: [...input.argv],
    start_time: input.startTime,
    hermes_home: input.home,
  };
}
