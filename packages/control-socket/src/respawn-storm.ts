import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@hermes/config';
import { withTakeoverToken } from './exclusive-file.js';

/** One start per line, epoch seconds, under the process home. */
export const GATEWAY_STARTS_LOG_FILE_NAME = 'gateway-starts.log';

export const RESPAWN_STORM_DEFAULTS = {
  /** More starts than this inside the window is a storm. */
  maxStarts: 5,
  windowSeconds: 120,
  backoffCapSeconds: 300,
} as const;

/** First backoff step of a storm, in seconds; it doubles per extra start, up to 2^6 times. */
const BACKOFF_BASE_SECONDS = 5;
const BACKOFF_MAX_DOUBLINGS = 6;
/** Lines kept in the ledger: enough history for any window, never an unbounded file. */
const MIN_LINES_KEPT = 40;

export interface RespawnStormOptions {
  readonly maxStarts?: number;
  readonly windowSeconds?: number;
  readonly backoffCapSeconds?: number;
  /**
   * Wall clock in milliseconds. The ledger outlives the process, so it cannot use the
   * per-process monotonic clock. Default `Date.now`.
   */
  readonly now?: () => number;
}

export interface RespawnStormCheck {
  /** True when more than `maxStarts` starts fall inside the window, this one included. */
  readonly storm: boolean;
  readonly startsInWindow: number;
  /** How long to wait before starting for real; 0 when there is no storm. */
  readonly backoffSeconds: number;
}

/**
 * Records this start in `<home>/gateway-starts.log` and says whether the gateway is being
 * respawned in a storm (a crash loop under a service manager), and how long to back off. Best
 * effort: an unreadable or unwritable ledger never stops the gateway from starting.
 */
export async function recordStartAndCheckStorm(
  home: string,
  options: RespawnStormOptions = {},
): Promise<RespawnStormCheck> {
  const maxStarts = options.maxStarts ?? RESPAWN_STORM_DEFAULTS.maxStarts;
  const windowSeconds = options.windowSeconds ?? RESPAWN_STORM_DEFAULTS.windowSeconds;
  const backoffCap = options.backoffCapSeconds ?? RESPAWN_STORM_DEFAULTS.backoffCapSeconds;
  const nowSeconds = (options.now ?? Date.now)() / 1000;
  const file = path.join(home, GATEWAY_STARTS_LOG_FILE_NAME);

  // Read, append and write back under the ledger's takeover token, so two starts at once both
  // count (without it the later write drops the earlier start). A token a live process keeps
  // past its wait is not waited out longer: the start is recorded without it, best effort.
  const record = () => appendStart(file, nowSeconds, Math.max(maxStarts * 4, MIN_LINES_KEPT));
  const locked = await withTakeoverToken(file, record).catch(() => ({ taken: false as const }));
  const kept = locked.taken ? locked.value : await record();

  const startsInWindow = kept.filter(
    (value) => value <= nowSeconds && nowSeconds - value <= windowSeconds,
  ).length;
  const storm = startsInWindow > maxStarts;
  const doublings = Math.min(startsInWindow - maxStarts, BACKOFF_MAX_DOUBLINGS);
  return {
    storm,
    startsInWindow,
    backoffSeconds: storm ? Math.min(backoffCap, BACKOFF_BASE_SECONDS * 2 ** doublings) : 0,
  };
}

/** Appends `nowSeconds` to the ledger, keeping its last `keep` lines; returns what it holds now. */
async function appendStart(file: string, nowSeconds: number, keep: number): Promise<number[]> {
  let starts: number[] = [];
  try {
    starts = (await readFile(file, 'utf8'))
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((value) => Number.isFinite(value) && value > 0);
  } catch {
    // No ledger yet, or unreadable: count only this start.
  }
  starts.push(nowSeconds);
  const kept = starts.slice(-keep);
  try {
    await writeFileAtomic(file, `${kept.map((value) => value.toFixed(3)).join('\n')}\n`);
  } catch {
    // Best effort: the check still uses what we know.
  }
  return kept;
}
