import { existsSync } from 'node:fs';
import path from 'node:path';
import { openSessionStore, type SessionRecord, type SessionStore } from '@hermes/session-store';
import { CliError } from './errors.js';
import { oneLine } from './output/format.js';

/** Opens the profile's `state.db` (created when missing; shared safely with a running gateway). */
export function openStore(home: string): Promise<SessionStore> {
  return openSessionStore({ path: path.join(home, 'state.db') });
}

/** Runs `work` with the profile's store and always closes it. */
export async function withStore<T>(
  home: string,
  work: (store: SessionStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(home);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * Runs `work` with the profile's store when its `state.db` exists; otherwise returns `missing()`
 * without opening anything, so a command that only reads (or finds nothing to change) never
 * creates a `state.db` — nor the home around it.
 */
export async function withExistingStore<T>(
  home: string,
  work: (store: SessionStore) => Promise<T>,
  missing: () => T,
): Promise<T> {
  if (!existsSync(path.join(home, 'state.db'))) return missing();
  return withStore(home, work);
}

/** A session reference from the command line, trimmed; blank is a usage error. */
export function sessionReference(reference: string): string {
  const wanted = reference.trim();
  if (wanted === '') {
    throw new CliError({
      code: 'usage',
      message: 'a session id or title is required',
      exitCode: 2,
    });
  }
  return wanted;
}

export function sessionNotFound(reference: string): CliError {
  return new CliError({
    code: 'session_not_found',
    message: `no session matches "${oneLine(reference, 80)}"`,
    hint: 'List them with: hermes sessions list (--all includes archived and hidden ones)',
  });
}

/**
 * Finds the session a person named: an exact id, an exact title (hidden ones too), the newest of a
 * numbered title lineage (`Trip #2`), or a unique id prefix. Unknown → `session_not_found` (exit 1);
 * a prefix that fits several → `session_ambiguous`, listing them.
 */
export function resolveSession(store: SessionStore, reference: string): SessionRecord {
  const wanted = sessionReference(reference);
  const byId = store.getSession(wanted);
  if (byId) return byId;
  // A reference longer than any title names no title: both lookups answer nothing for it.
  const byTitle =
    store.getSessionByTitle(wanted, { includeHidden: true }) ?? store.resolveSessionByTitle(wanted);
  if (byTitle) return byTitle;
  const page = store.listSessionsRich({
    idQuery: wanted,
    includeArchived: true,
    includeHidden: true,
    includeChildren: true,
    projectCompressionTips: false,
    limit: 20,
  });
  const matches = page.sessions.filter((session) => session.id.startsWith(wanted));
  if (matches.length === 1 && matches[0]) return store.requireSession(matches[0].id);
  if (matches.length > 1) {
    throw new CliError({
      code: 'session_ambiguous',
      message: `"${oneLine(wanted, 80)}" matches ${matches.length} sessions: ${matches
        .slice(0, 5)
        .map((session) => session.id)
        .join(', ')}${matches.length > 5 ? ', …' : ''}`,
      hint: 'Give more of the id, or the exact title',
    });
  }
  throw sessionNotFound(wanted);
}
