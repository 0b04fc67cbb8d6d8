import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@hermes/config';
import * as v from 'valibot';
import {
  GATEWAY_KIND,
  RUNTIME_STATUS_FILE_NAME,
  RUNTIME_STATUS_STALE_AFTER_MS,
} from './constants.js';
import { isRecordedProcessLive } from './process-identity.js';

export const GATEWAY_STATES = [
  'starting',
  'running',
  'degraded',
  'draining',
  'stopped',
  'startup_failed',
] as const;
export type GatewayState = (typeof GATEWAY_STATES)[number];

export const PLATFORM_STATES = [
  'connecting',
  'connected',
  'retrying',
  'fatal',
  'disabled',
] as const;
export type PlatformState = (typeof PLATFORM_STATES)[number];

export const SESSION_STORE_STATUSES = ['ok', 'unavailable', 'retrying', 'unknown'] as const;
export type SessionStoreStatus = (typeof SESSION_STORE_STATUSES)[number];

/** Gateway states that mean "not running"; a record in one of them names no live gateway. */
export const INACTIVE_GATEWAY_STATES: ReadonlySet<string> = new Set(['stopped', 'startup_failed']);

/** `gateway_state.json` as read from disk: loosely, because older writers wrote less. */
export const RuntimeStatusSchema = v.looseObject({
  pid: v.optional(v.unknown()),
  kind: v.optional(v.unknown()),
  start_time: v.optional(v.unknown()),
  hermes_home: v.optional(v.unknown()),
  gateway_state: v.optional(v.unknown()),
  active_agents: v.optional(v.unknown()),
  served_profiles: v.optional(v.unknown()),
  platforms: v.optional(v.unknown()),
  updated_at: v.optional(v.unknown()),
  code_sha: v.optional(v.unknown()),
  code_version: v.optional(v.unknown()),
});
export type RuntimeStatusRecord = v.InferOutput<typeof RuntimeStatusSchema>;

/** The running code's identity, stamped into runtime status and `identify`. */
export interface CodeIdentity {
  readonly sha: string | null;
  readonly version: string | null;
}

export function runtimeStatusPath(home: string): string {
  return path.join(home, RUNTIME_STATUS_FILE_NAME);
}

/** The record, or `null` when missing, unreadable or not a JSON object. Never throws. */
export async function readRuntimeStatus(home: string): Promise<RuntimeStatusRecord | null> {
  let text: string;
  try {
    text = await readFile(runtimeStatusPath(home), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    const result = v.safeParse(RuntimeStatusSchema, parsed);
    return result.success && !Array.isArray(parsed) ? result.output : null;
  } catch {
    return null;
  }
}

export interface PlatformStatusUpdate {
  /** `<platform>` for the primary profile, `<profile>:<platform>` for a secondary one. */
  readonly key: string;
  readonly state?: PlatformState;
  readonly errorCode?: string | null;
  readonly errorMessage?: string | null;
  readonly needsAttention?: boolean;
  readonly retryingSince?: string | null;
  readonly ingressUrl?: string | null;
  readonly listenerBase?: string | null;
}

/** The fields a write may set; only the ones present are applied. */
export interface RuntimeStatusUpdate {
  readonly gatewayState?: GatewayState;
  readonly exitReason?: string | null;
  readonly restartRequested?: boolean;
  readonly activeAgents?: unknown;
  readonly activeWork?: readonly unknown[] | null;
  readonly servedProfiles?: readonly string[];
  readonly sessionStore?: string;
  readonly platform?: PlatformStatusUpdate;
  /** Drop every `<profile>:<platform>` key: a fresh process must not inherit them. */
  readonly clearProfilePlatforms?: boolean;
  /** Drop only the `<profile>:` keys of this profile (hot unroute). */
  readonly dropProfilePlatforms?: string;
}

/** Who is writing; re-stamped at the top level on every write. */
export interface RuntimeStatusWriter {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly startTime: number | null;
  /** Canonical absolute process home. */
  readonly home: string;
  readonly codeIdentity?: CodeIdentity;
  /** Wall clock for `updated_at` (display only); defaults to `Date.now`. */
  readonly now?: () => number;
}

function nonNegativeInteger(value: unknown): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number) || number < 0) return 0;
  return Math.floor(number);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Applies one write to a record (pure). The top level is always re-stamped with the current
 * writer because the file outlives its writer; everything else changes only when passed.
 */
export function mergeRuntimeStatus(
  existing: Record<string, unknown> | null,
  update: RuntimeStatusUpdate,
  writer: RuntimeStatusWriter,
): Record<string, unknown> {
  const nowIso = new Date((writer.now ?? Date.now)()).toISOString();
  const record: Record<string, unknown> = existing
    ? { ...existing }
    : {
        hermes_home: writer.home,
        gateway_state: 'starting',
        exit_reason: null,
        restart_requested: false,
        active_agents: 0,
        platforms: {},
        session_store: { status: 'unknown' },
      };
  Object.assign(record, {
    kind: GATEWAY_KIND,
    pid: writer.pid,
    argv: [...writer.argv],
    start_time: writer.startTime,
    updated_at: nowIso,
    code_sha: writer.codeIdentity?.sha ?? null,
    code_version: writer.codeIdentity?.version ?? null,
  });
  if (update.gatewayState !== undefined) record.gateway_state = update.gatewayState;
  if (update.exitReason !== undefined) record.exit_reason = update.exitReason;
  if (update.restartRequested !== undefined) record.restart_requested = update.restartRequested;
  if (update.activeAgents !== undefined) {
    record.active_agents = nonNegativeInteger(update.activeAgents);
  }
  if (update.activeWork !== undefined) {
    record.active_work = update.activeWork === null ? null : [...update.activeWork];
  }
  if (update.servedProfiles !== undefined) record.served_profiles = [...update.servedProfiles];
  if (update.sessionStore !== undefined) {
    const status = (SESSION_STORE_STATUSES as readonly string[]).includes(update.sessionStore)
      ? update.sessionStore
      : 'unknown';
    record.session_store = { status };
  }
  let platforms: Record<string, unknown> = isObject(record.platforms)
    ? { ...record.platforms }
    : {};
  if (update.clearProfilePlatforms) {
    platforms = Object.fromEntries(Object.entries(platforms).filter(([key]) => !key.includes(':')));
  }
  if (update.dropProfilePlatforms !== undefined) {
    const prefix = `${update.dropProfilePlatforms}:`;
    platforms = Object.fromEntries(
      Object.entries(platforms).filter(([key]) => !key.startsWith(prefix)),
    );
  }
  if (update.platform !== undefined) {
    const change = update.platform;
    const entry: Record<string, unknown> = isObject(platforms[change.key])
      ? { ...(platforms[change.key] as Record<string, unknown>) }
      : {};
    if (change.state !== undefined) entry.state = change.state;
    if (change.errorCode !== undefined) entry.error_code = change.errorCode;
    if (change.errorMessage !== undefined) entry.error_message = change.errorMessage;
    if (change.needsAttention !== undefined) entry.needs_attention = change.needsAttention;
    if (change.retryingSince !== undefined) entry.retrying_since = change.retryingSince;
    if (change.ingressUrl !== undefined) entry.ingress_url = change.ingressUrl;
    if (change.listenerBase !== undefined) entry.listener_base = change.listenerBase;
    entry.updated_at = nowIso;
    entry.writer_pid = writer.pid;
    entry.writer_start_time = writer.startTime;
    platforms[change.key] = entry;
  }
  record.platforms = platforms;
  return record;
}

// Writes to one file are chained so two concurrent updates in this process never lose each other.
const writeQueues = new Map<string, Promise<unknown>>();

// The record this process last made durable, per file: the gateway is the only writer of its
// own status, so `identify` can answer from memory instead of a disk read per query.
const lastWritten = new Map<string, Readonly<Record<string, unknown>>>();

/** The record this process last wrote for `home` (after it was durable), if any. */
export function lastWrittenRuntimeStatus(
  home: string,
): Readonly<Record<string, unknown>> | undefined {
  return lastWritten.get(runtimeStatusPath(home));
}

/** `lastWrittenRuntimeStatus` by the status file's path (`runtimeStatusPath(home)`). */
export function lastWrittenRuntimeStatusAt(
  statusFile: string,
): Readonly<Record<string, unknown>> | undefined {
  return lastWritten.get(statusFile);
}

/**
 * Merges `update` into `<home>/gateway_state.json` and replaces the file atomically (temp file,
 * fsync, rename), as compact JSON. Returns the record written.
 */
export function writeRuntimeStatus(
  home: string,
  update: RuntimeStatusUpdate,
  writer: RuntimeStatusWriter,
): Promise<Record<string, unknown>> {
  const file = runtimeStatusPath(home);
  const previous = writeQueues.get(file) ?? Promise.resolve();
  const next = previous
    .catch(() => {})
    .then(async () => {
      const record = mergeRuntimeStatus(await readRuntimeStatus(home), update, writer);
      await writeFileAtomic(file, JSON.stringify(record));
      lastWritten.set(file, record);
      return record;
    });
  writeQueues.set(file, next);
  void next
    .finally(() => {
      if (writeQueues.get(file) === next) writeQueues.delete(file);
    })
    .catch(() => {});
  return next;
}

const YEAR_2000_MS = Date.UTC(2000, 0, 1);
const ONE_DAY_MS = 86_400_000;

/**
 * ISO-8601 date and time as writers spell it: `T`, `t` or a space between date and time (Python's
 * `str(datetime)` uses a space), optional seconds and fraction, and an optional zone (`Z` or an
 * offset such as `+02:00`, `+0200`, `+02`).
 */
const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * Epoch milliseconds of an ISO-8601 stamp, read as UTC when it names no zone, or `null`. Parsed
 * by hand: `Date.parse` reads a zone-less date-time as local time (and accepts other formats
 * differently per engine), which would shift a status record by the reader's offset.
 */
function parseIsoTimestamp(text: string): number | null {
  const match = ISO_TIMESTAMP.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction, , sign, offsetHours, offsetMinutes] =
    match.map((part) => part ?? '');
  const parts = [year, month, day, hour || '0', minute || '0', second || '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [y, mo, d, h, mi, s] = parts;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, Number(`${fraction}00`.slice(0, 3)));
  // Reject what Date would silently roll over (2026-02-30, 24:00, 12:60).
  if (
    date.getUTCFullYear() !== y ||
    date.getUTCMonth() !== mo - 1 ||
    date.getUTCDate() !== d ||
    date.getUTCHours() !== h ||
    date.getUTCMinutes() !== mi ||
    date.getUTCSeconds() !== s
  ) {
    return null;
  }
  if (sign === '') return date.getTime();
  const offsetH = Number(offsetHours);
  const offsetM = Number(offsetMinutes || '0');
  if (offsetH > 23 || offsetM > 59) return null;
  const offsetMs = (offsetH * 60 + offsetM) * 60_000 * (sign === '-' ? -1 : 1);
  return date.getTime() - offsetMs;
}

/**
 * `updated_at` as epoch milliseconds: ISO-8601 strings (with a zone, or without one — then UTC,
 * never the reader's local time) or plausible epoch seconds (from 2000-01-01 to a day ahead).
 * Anything else ⇒ `null`.
 */
export function normalizeUpdatedAt(value: unknown, nowMs: number = Date.now()): number | null {
  if (typeof value === 'number') {
    const milliseconds = value * 1000;
    if (!Number.isFinite(milliseconds)) return null;
    return milliseconds >= YEAR_2000_MS && milliseconds <= nowMs + ONE_DAY_MS ? milliseconds : null;
  }
  if (typeof value !== 'string') return null;
  return parseIsoTimestamp(value.trim());
}

/** True when the record's `updated_at` is missing or older than 120 s. */
export function isRuntimeStatusStale(
  record: RuntimeStatusRecord,
  nowMs: number = Date.now(),
): boolean {
  const updated = normalizeUpdatedAt(record.updated_at, nowMs);
  return updated === null || nowMs - updated > RUNTIME_STATUS_STALE_AFTER_MS;
}

/** The record's PID if it is an integer, else `null`. */
export function runtimeStatusPid(record: RuntimeStatusRecord): number | null {
  const pid = record.pid;
  return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/** The recorded PID is alive and still the process that wrote the record. */
export async function runtimeStatusPidIsLive(record: RuntimeStatusRecord): Promise<boolean> {
  const pid = runtimeStatusPid(record);
  if (pid === null) return false;
  const startTime = typeof record.start_time === 'number' ? record.start_time : null;
  return isRecordedProcessLive(pid, startTime);
}
