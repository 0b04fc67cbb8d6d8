import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { onTestFinished } from 'vitest';
import { type OpenSessionStoreOptions, openSessionStore, type SessionStore } from '../src/index.js';

/** A fresh state.db in a temp home, closed (and removed) when the test finishes. */
export async function openTestStore(
  options: Omit<OpenSessionStoreOptions, 'path'> = {},
): Promise<{ store: SessionStore; databasePath: string; home: string }> {
  const home = await tempHome('hermes-store-');
  const databasePath = path.join(home.path, 'state.db');
  const store = await openSessionStore({ path: databasePath, ...options });
  onTestFinished(() => store.close());
  return { store, databasePath, home: home.path };
}

/** Opens another handle on an existing file, closed when the test finishes. */
export async function reopenStore(
  databasePath: string,
  options: Omit<OpenSessionStoreOptions, 'path'> = {},
): Promise<SessionStore> {
  const store = await openSessionStore({ path: databasePath, ...options });
  onTestFinished(() => store.close());
  return store;
}
