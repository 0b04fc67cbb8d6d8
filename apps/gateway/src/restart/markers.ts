import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@hermes/config';
import * as v from 'valibot';

/** Written by a chat's `/restart`: that chat is told when the gateway is back. */
export const RESTART_NOTIFY_FILE = '.restart_notify.json';
/** Written in the last stop phase of a restart not asked for from a chat. */
export const RESTART_PENDING_FILE = '.restart_pending.json';
/** Touched by a stop that drained cleanly; consumed by the next start. */
export const CLEAN_SHUTDOWN_FILE = '.clean_shutdown';

export const RESTART_NOTICE_TEXT = '♻ Gateway restarted successfully. Your session continues.';
export const ONLINE_NOTICE_TEXT = '♻️ Gateway online — Hermes is back and ready.';

const notifySchema = v.object({
  platform: v.string(),
  chat_id: v.union([v.string(), v.number()]),
  thread_id: v.optional(v.nullable(v.union([v.string(), v.number()]))),
  user_id: v.optional(v.nullable(v.union([v.string(), v.number()]))),
});

export interface RestartNotifyMarker {
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
}

export interface RestartPendingMarker {
  readonly requestedAt: string;
  readonly viaService: boolean;
  readonly detached: boolean;
}

const pendingSchema = v.object({
  requested_at: v.string(),
  via_service: v.optional(v.boolean(), false),
  detached: v.optional(v.boolean(), false),
});

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The `/restart` marker, or undefined (absent or malformed). The marker is not removed here. */
export async function readRestartNotify(home: string): Promise<RestartNotifyMarker | undefined> {
  const parsed = v.safeParse(notifySchema, await readJson(path.join(home, RESTART_NOTIFY_FILE)));
  if (!parsed.success) return undefined;
  const threadId = parsed.output.thread_id;
  return {
    platform: parsed.output.platform,
    chatId: String(parsed.output.chat_id),
    threadId: threadId === null || threadId === undefined ? null : String(threadId),
  };
}

export async function writeRestartNotify(home: string, marker: RestartNotifyMarker): Promise<void> {
  await writeFileAtomic(
    path.join(home, RESTART_NOTIFY_FILE),
    JSON.stringify({
      platform: marker.platform,
      chat_id: marker.chatId,
      thread_id: marker.threadId,
    }),
  );
}

export async function readRestartPending(home: string): Promise<RestartPendingMarker | undefined> {
  const parsed = v.safeParse(pendingSchema, await readJson(path.join(home, RESTART_PENDING_FILE)));
  if (!parsed.success) return undefined;
  return {
    requestedAt: parsed.output.requested_at,
    viaService: parsed.output.via_service,
    detached: parsed.output.detached,
  };
}

export async function writeRestartPending(
  home: string,
  marker: { viaService: boolean; detached: boolean },
): Promise<void> {
  await writeFileAtomic(
    path.join(home, RESTART_PENDING_FILE),
    JSON.stringify({
      requested_at: new Date().toISOString(),
      via_service: marker.viaService,
      detached: marker.detached,
    }),
  );
}

export async function removeMarker(home: string, name: string): Promise<void> {
  await rm(path.join(home, name), { force: true });
}

/** Consumes `.clean_shutdown`: true when the previous run stopped cleanly. */
export async function consumeCleanShutdown(home: string): Promise<boolean> {
  const file = path.join(home, CLEAN_SHUTDOWN_FILE);
  try {
    await rm(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

export async function touchCleanShutdown(home: string): Promise<void> {
  await writeFile(path.join(home, CLEAN_SHUTDOWN_FILE), `${new Date().toISOString()}\n`, {
    mode: 0o600,
  });
}
