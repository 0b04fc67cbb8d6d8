import { existsSync } from 'node:fs';
import path from 'node:path';
import { listProfiles, loadConfig } from '@hermes/config';
import type { Bridge } from '../bridge.js';
import { DENIED_TITLE_SOURCES } from '../constants.js';
import { RPC_ERROR_CODES, RpcError } from '../contract/error-codes.js';
import type { MethodResult } from '../contract/methods.js';

/** Avatar files a profile home may hold (what `has_avatar` looks for). */
export const AVATAR_FILES = [
  'avatar.png',
  'avatar.jpg',
  'avatar.jpeg',
  'avatar.webp',
  'avatar.gif',
] as const;

type ProfileEntry = MethodResult<'profiles.list'>['profiles'][number];

function uiMeta(home: string): Record<string, unknown> | null {
  try {
    const raw = loadConfig({ home }).raw as Record<string, unknown> | undefined;
    const ui = raw?.ui;
    return typeof ui === 'object' && ui !== null && !Array.isArray(ui)
      ? (ui as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function profileMethods(bridge: Bridge) {
  return {
    async 'profiles.list'(): Promise<MethodResult<'profiles.list'>> {
      try {
        const launchHome = bridge.registry.launch.home;
        const profiles: ProfileEntry[] = [];
        for (const info of listProfiles(bridge.registry.root)) {
          const runtime = bridge.registry.resolve(info.name);
          let lastSession: ProfileEntry['last_session'] = null;
          let canonical: ProfileEntry['canonical_session'] = null;
          // A profile without a state.db has no sessions: listing it must not create one.
          if (runtime.storeIfOpen || existsSync(path.join(runtime.home, 'state.db'))) {
            const store = await runtime.store();
            const row = store.listSessionsRich({ limit: 1 }).sessions[0];
            if (row) {
              lastSession = {
                id: row.id,
                resolved_id: row.id,
                title: row.title,
                preview: row.preview,
                source: row.source,
                started_at: row.startedAt,
                last_active: row.lastActive,
                message_count: row.messageCount,
                ended_at: row.endedAt,
                end_reason: row.endReason,
                archived: row.archived === 1,
                pinned: row.pinned === 1,
                hidden: row.hidden === 1,
                unread: row.unread,
                live_session_id:
                  bridge.liveSessionFor(runtime, row.lineageRootId ?? row.id)?.id ?? null,
              };
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
            ui_meta: uiMeta(info.home),
            has_avatar: AVATAR_FILES.some((file) => existsSync(path.join(info.home, file))),
          });
        }
        return { profiles, bot_mode_protocol: true };
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
