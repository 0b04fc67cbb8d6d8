import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { currentProcessIdentity, type ProcessIdentity } from '@hermes/session-store';
import type { ChildResult } from './child-result.js';
import type { DelegationResultRecord } from './completion-event.js';
import { DELIVERY_CLAIM_DIR, TERMINAL_CHECKPOINT_DIR } from './delegation-limits.js';

/**
 * Files next to the ledger that close its two crash windows:
 *
 * - **terminal checkpoints** (`async_delegation_terminals/<id>.json`): a finished unit's result is
 *   written here before its ledger row is updated, and partial per-child results as each child
 *   ends, so a process killed before (or while waiting for) the SQLite write loses nothing;
 * - **claim markers** (`async_delegation_claims/<id>~<pid>.json`): written before a delivery
 *   claims a row, so a claim held by a process that died can be released at once instead of
 *   waiting out the 300 s claim lease.
 *
 * Writes are temp file + rename (no fsync): they must survive the process, not the machine.
 */

/** Ids become file names only when they are plain. */
const SAFE_ID = /^[A-Za-z0-9_.-]{1,128}$/;

export function isSafeDelegationId(delegationId: string): boolean {
  return SAFE_ID.test(delegationId) && delegationId !== '.' && delegationId !== '..';
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, JSON.stringify(value), { mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

export interface TerminalCheckpoint {
  readonly delegation_id: string;
  readonly owner: ProcessIdentity;
  readonly status: string;
  readonly result: DelegationResultRecord;
  readonly error: string | null;
}

export function checkpointPath(home: string, delegationId: string, partial = false): string {
  return path.join(
    home,
    TERMINAL_CHECKPOINT_DIR,
    `${delegationId}${partial ? '.partial' : ''}.json`,
  );
}

export async function writeTerminalCheckpoint(
  home: string,
  checkpoint: TerminalCheckpoint,
): Promise<void> {
  if (!isSafeDelegationId(checkpoint.delegation_id)) return;
  await writeJson(checkpointPath(home, checkpoint.delegation_id), checkpoint);
}

/** The children that finished so far (rewritten as each one ends). */
export async function writePartialResults(
  home: string,
  delegationId: string,
  results: readonly ChildResult[],
): Promise<void> {
  if (!isSafeDelegationId(delegationId)) return;
  await writeJson(checkpointPath(home, delegationId, true), {
    delegation_id: delegationId,
    results,
  });
}

export async function removeCheckpoints(home: string, delegationId: string): Promise<void> {
  if (!isSafeDelegationId(delegationId)) return;
  await Promise.all([
    rm(checkpointPath(home, delegationId), { force: true }),
    rm(checkpointPath(home, delegationId, true), { force: true }),
  ]).catch(() => {});
}

export async function readTerminalCheckpoint(
  home: string,
  delegationId: string,
): Promise<TerminalCheckpoint | undefined> {
  if (!isSafeDelegationId(delegationId)) return undefined;
  const value = await readJson(checkpointPath(home, delegationId));
  if (typeof value !== 'object' || value === null) return undefined;
  const checkpoint = value as Partial<TerminalCheckpoint>;
  if (checkpoint.delegation_id !== delegationId || typeof checkpoint.status !== 'string')
    return undefined;
  return checkpoint as TerminalCheckpoint;
}

export async function readPartialResults(
  home: string,
  delegationId: string,
): Promise<ChildResult[]> {
  if (!isSafeDelegationId(delegationId)) return [];
  const value = (await readJson(checkpointPath(home, delegationId, true))) as
    | { results?: unknown }
    | undefined;
  return Array.isArray(value?.results) ? (value.results as ChildResult[]) : [];
}

/** Delegation ids that have a checkpoint of either kind. */
export async function listCheckpointIds(home: string): Promise<string[]> {
  const names = await readdir(path.join(home, TERMINAL_CHECKPOINT_DIR)).catch(() => [] as string[]);
  const ids = new Set<string>();
  for (const name of names) {
    const match = /^(.+?)(?:\.partial)?\.json$/.exec(name);
    if (match?.[1] && isSafeDelegationId(match[1])) ids.add(match[1]);
  }
  return [...ids];
}

export interface ClaimMarker {
  readonly delegationId: string;
  readonly pid: number;
  readonly startTicks: string | null;
  /** Epoch seconds when the marker was written (just before the claim). */
  readonly writtenAt: number;
  readonly file: string;
}

function claimFile(home: string, delegationId: string, pid: number): string {
  return path.join(home, DELIVERY_CLAIM_DIR, `${delegationId}~${pid}.json`);
}

export async function writeClaimMarker(home: string, delegationId: string): Promise<void> {
  if (!isSafeDelegationId(delegationId)) return;
  const self = currentProcessIdentity();
  await writeJson(claimFile(home, delegationId, self.pid), {
    pid: self.pid,
    startTicks: self.startTicks,
    writtenAt: Date.now() / 1000,
  });
}

export async function removeClaimMarker(home: string, delegationId: string): Promise<void> {
  if (!isSafeDelegationId(delegationId)) return;
  await rm(claimFile(home, delegationId, currentProcessIdentity().pid), { force: true }).catch(
    () => {},
  );
}

export async function listClaimMarkers(home: string): Promise<ClaimMarker[]> {
  const folder = path.join(home, DELIVERY_CLAIM_DIR);
  const names = await readdir(folder).catch(() => [] as string[]);
  const markers: ClaimMarker[] = [];
  for (const name of names) {
    const match = /^(.+)~(\d+)\.json$/.exec(name);
    if (!match?.[1] || !isSafeDelegationId(match[1])) continue;
    const file = path.join(folder, name);
    const value = (await readJson(file)) as Partial<ClaimMarker> | undefined;
    if (typeof value?.pid !== 'number' || typeof value.writtenAt !== 'number') continue;
    markers.push({
      delegationId: match[1],
      pid: value.pid,
      startTicks: typeof value.startTicks === 'string' ? value.startTicks : null,
      writtenAt: value.writtenAt,
      file,
    });
  }
  return markers;
}
