-- The lease tables as WITHOUT ROWID tables keyed by the lease key, without expiry indexes. A
-- rowid table with a text primary key keeps the key in a second b-tree (its automatic index), and
-- every query reads a lease by its key (expiry is only ever compared on that one row), so each
-- lease write — two per chat turn — touched three b-trees where one does. drizzle-kit cannot
-- express WITHOUT ROWID, so this migration is custom: each table is copied into its new shape,
-- rows included, so leases held while a file is upgraded (by a process still running the previous
-- version) survive.
CREATE TABLE `__new_session_turn_leases` (
	`conversation_id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`acquired_at` real NOT NULL,
	`expires_at` real NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_session_turn_leases` (`conversation_id`, `holder`, `acquired_at`, `expires_at`)
  SELECT `conversation_id`, `holder`, `acquired_at`, `expires_at` FROM `session_turn_leases`;
--> statement-breakpoint
DROP TABLE `session_turn_leases`;
--> statement-breakpoint
ALTER TABLE `__new_session_turn_leases` RENAME TO `session_turn_leases`;
--> statement-breakpoint
CREATE TABLE `__new_compression_locks` (
	`session_id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`acquired_at` real NOT NULL,
	`expires_at` real NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_compression_locks` (`session_id`, `holder`, `acquired_at`, `expires_at`)
  SELECT `session_id`, `holder`, `acquired_at`, `expires_at` FROM `compression_locks`;
--> statement-breakpoint
DROP TABLE `compression_locks`;
--> statement-breakpoint
ALTER TABLE `__new_compression_locks` RENAME TO `compression_locks`;
