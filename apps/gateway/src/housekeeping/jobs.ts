import type { ProfileRuntimeSet } from '@hermes/agent';
import { coerceBoolean, coerceNumber } from '@hermes/config';
import { cleanupBotRelayArtifacts } from '@hermes/session-store';
import type { Logger } from 'pino';
import {
  cleanupBotDmCache,
  cleanupMediaCache,
  MEDIA_CACHES,
  type MediaCache,
} from './cache-cleanup.js';
import type { HousekeepingJob } from './housekeeping.js';

/** Cadences in ticks (one tick = the housekeeping interval, 60 s by default). */
export const HOURLY_TICKS = 60;
export const FTS_RETRY_TICKS = 5;

function section(raw: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = raw[key];
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The gateway's housekeeping jobs over the profiles it serves. */
export function housekeepingJobs(options: {
  readonly home: string;
  readonly raw: Record<string, unknown>;
  readonly registry: ProfileRuntimeSet;
  readonly logger: Logger;
}): HousekeepingJob[] {
  const { registry, logger } = options;
  const sessions = section(options.raw, 'sessions');
  const autoArchive = coerceBoolean(sessions.auto_archive, false);
  const archiveDays = coerceNumber(sessions.auto_archive_days, 3, { min: 0.001, max: 36_500 });
  const minIntervalMs =
    coerceNumber(sessions.min_interval_hours, 24, { min: 0, max: 8760 }) * 3_600_000;
  let lastArchive = Number.NEGATIVE_INFINITY;
  const stores = () =>
    registry
      .runtimes()
      .map((runtime) => runtime.storeIfOpen)
      .filter((store) => store !== undefined);

  const jobs: HousekeepingJob[] = [
    {
      name: 'media cache cleanup',
      everyTicks: HOURLY_TICKS,
      run: async () => {
        for (const runtime of registry.runtimes()) {
          for (const cache of Object.keys(MEDIA_CACHES) as MediaCache[]) {
            const removed = await cleanupMediaCache(cache, 24, runtime.home);
            if (removed > 0)
              logger.info(
                `${MEDIA_CACHES[cache].label} cache cleanup: removed ${removed} stale file(s)`,
              );
          }
        }
        return 0;
      },
    },
    { name: 'Bot DM tempfile sweep', everyTicks: HOURLY_TICKS, run: () => cleanupBotDmCache(24) },
    {
      name: 'Bot relay artifact sweep',
      everyTicks: HOURLY_TICKS,
      run: () => cleanupBotRelayArtifacts(24),
    },
    {
      name: 'deferred FTS rebuild',
      everyTicks: FTS_RETRY_TICKS,
      // The rebuild runs in the store's worker thread; this only asks.
      run: async () => {
        for (const store of stores()) await store.retryDeferredFtsRecovery();
        return 0;
      },
    },
    {
      name: 'delivery ledger retention',
      everyTicks: HOURLY_TICKS,
      run: async () => {
        let pruned = 0;
        for (const store of stores()) pruned += await store.pruneObligations();
        return pruned;
      },
    },
  ];
  if (autoArchive)
    jobs.push({
      name: 'session auto-archive',
      everyTicks: HOURLY_TICKS,
      run: async () => {
        const now = performance.now();
        if (now - lastArchive < minIntervalMs) return 0;
        lastArchive = now;
        let archived = 0;
        for (const store of stores())
          archived += await store.archiveStaleSessions({ olderThanSeconds: archiveDays * 86_400 });
        return archived;
      },
    });
  return jobs;
}
