import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ProfileRuntime } from '@hermes/agent';
import { listProfiles, type ProfileInfo } from '@hermes/config';
import type { Bridge } from '../bridge.js';
import { DENIED_TITLE_SOURCES } from '../constants.js';
import { RPC_ERROR_CODES, RpcError } from '../contract/error-codes.js';
import type { MethodResult } from '../contract/methods.js';
import { summaryOf } from './session-methods.js';

/** Avatar files a profile home may hold (what `has_avatar` looks for). */
export const AVATAR_FILES = [
  'avatar.png',
  'avatar.jpg',
  'avatar.jpeg',
  'avatar.webp',
  'avatar.gif',
] as const;

type ProfileEntry = MethodResult<'profiles.list'>['profiles'][number];

function uiMeta(runtime: ProfileRuntime): Record<string, unknown> | null {
  try {
    const raw = runtime.config().raw as Record<string, unknown> | undefined;
    const ui = raw?.ui;
    return typeof ui === 'object' && ui !== null && !Array.isArray(ui)
      ? (ui as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function statKey(file: string): string {
  const stats = statSync(file, { throwIfNoEntry: false });
  return stats ? `${stats.mtimeMs}:${stats.size}:${stats.ino}` : '-';
}

/** A number per distinct config object: a profile runtime hands out the same object while its
 * `config.yaml` is unchanged (re-checked at most every 100 ms), so the number names the config. */
const configNumbers = new WeakMap<object, number>();
let nextConfigNumber = 0;

function configKey(runtime: ProfileRuntime): string {
  try {
    const config = runtime.config();
    let number = configNumbers.get(config);
    if (number === undefined) {
      nextConfigNumber += 1;
      number = nextConfigNumber;
      configNumbers.set(config, number);
    }
    return `c${number}`;
  } catch {
    return 'c-';
  }
}

/** Any commit to a profile's `state.db` by any process: the open store's content version, else
 * the file and its WAL as they stand (a store not opened yet, or one that has none). */
function storeKey(runtime: ProfileRuntime, home: string): string {
  const store = runtime.storeIfOpen;
  if (store) {
    try {
      return `v${store.contentVersion()}`;
    } catch {}
  }
  return `${statKey(path.join(home, 'state.db'))}/${statKey(path.join(home, 'state.db-wal'))}`;
}

/**
 * What a `profiles.list` answer depends on, read cheaply: the profiles folder and each profile
 * home (profiles added or removed, avatars, parked markers) by `stat`, each profile's database by
 * its content version (any commit by any process), its config as the runtime sees it, and the
 * bridge's own live sessions. Equal fingerprints mean the previous answer is still exact, so it
 * is served again without opening anything.
 */
function fingerprint(bridge: Bridge, profiles: readonly ProfileInfo[]): string {
  const root = bridge.registry.root;
  // The root is the default profile's home, so it is among the profiles.
  const parts = [String(bridge.generation), statKey(path.join(root, 'profiles'))];
  for (const info of profiles) {
    const runtime = bridge.profile(info.name);
    parts.push(statKey(info.home), storeKey(runtime, info.home), configKey(runtime));
  }
  return parts.join('|');
}

export function profileMethods(bridge: Bridge) {
  let cached:
    | { key: string; infos: readonly ProfileInfo[]; result: MethodResult<'profiles.list'> }
    | undefined;
  return {
    async 'profiles.list'(): Promise<MethodResult<'profiles.list'>> {
      try {
        if (cached && fingerprint(bridge, cached.infos) === cached.key) return cached.result;
        const launchHome = bridge.registry.launch.home;
        const profiles: ProfileEntry[] = [];
        const infos = listProfiles(bridge.registry.root);
        // Taken before reading: a change made while this call reads shows up as a new fingerprint.
        const key = fingerprint(bridge, infos);
        for (const info of infos) {
          const runtime = bridge.profile(info.name);
          let lastSession: ProfileEntry['last_session'] = null;
          let canonical: ProfileEntry['canonical_session'] = null;
          let files: string[] = [];
          try {
            files = readdirSync(info.home);
          } catch {
            files = [];
          }
          // A profile without a state.db has no sessions: listing it must not create one.
          if (runtime.storeIfOpen || files.includes('state.db')) {
            const store = await runtime.store();
            const row = store.listSessionsRich({ limit: 1 }).sessions[0];
            if (row) {
              lastSession = summaryOf(bridge, runtime, row, row.id, {
                lastActive: row.lastActive,
                preview: row.preview,
                unread: row.unread,
              });
            }
            const summary = await runtime.run(() =>
              store.canonicalSession({ deniedSources: DENIED_TITLE_SOURCES }),
            );
            if (summary) {
              canonical = {
                id: summary.id,
                resolved_id: summary.resolvedId,
                root_title: summary.rootTitle,
                title: summary.title,
                preview: summary.preview,
                started_at: summary.startedAt,
                last_active: summary.lastActive,
                message_count: summary.messageCount,
              };
            }
          }
          profiles.push({
            name: info.name,
            home: info.home,
            is_default: info.isDefault,
            active: path.resolve(info.home) === launchHome,
            parked: info.parked,
            last_session: lastSession,
            canonical_session: canonical,
            ui_meta: uiMeta(runtime),
            has_avatar: AVATAR_FILES.some((file) => files.includes(file)),
          });
        }
        const result = { profiles, bot_mode_protocol: true as const };
        // A resurrection written by this very call changes the database: the next call recomputes
        // once and then serves the settled answer.
        cached = { key, infos, result };
        return result;
      } catch (error) {
        if (RpcError.isInstance(error) && error.code !== RPC_ERROR_CODES.internalError) throw error;
        throw new RpcError(
          RPC_ERROR_CODES.profilesFailure,
          `profiles.list failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    },
  };
}
