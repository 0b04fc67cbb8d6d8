import type { Clock, Sleep } from './clock.js';
import type { DatabaseFileIdentity } from './file-identity.js';
import type { ForeignHolderScanner } from './foreign-holders.js';
import type { JournalMode } from './open-database.js';

export interface SessionStoreLogger {
  warn(message: string): void;
}

/** Resolved options shared by the store and its FTS maintenance. */
export interface StoreSettings {
  readonly filePath: string;
  readonly journalMode: JournalMode;
  readonly busyTimeoutMs: number;
  readonly writePatienceSeconds: number;
  readonly ftsRetryCooldownMs: number;
  readonly rebuildLockTimeoutMs: number;
  readonly scanner: ForeignHolderScanner;
  readonly clock: Clock;
  readonly sleep: Sleep;
  readonly logger: SessionStoreLogger;
  /** The files as opened; checked before every write attempt. */
  readonly fileIdentity: DatabaseFileIdentity;
}
