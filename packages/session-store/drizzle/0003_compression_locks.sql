CREATE TABLE `compression_locks` (
	`session_id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`acquired_at` real NOT NULL,
	`expires_at` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idx_compression_locks_expires` ON `compression_locks` (`expires_at`);