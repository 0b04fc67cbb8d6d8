CREATE TABLE `stored_responses` (
	`response_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`last_message_id` integer,
	`previous_response_id` text,
	`body` text NOT NULL,
	`created_at` real NOT NULL,
	`used_at` real NOT NULL,
	`used_seq` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idx_stored_responses_used` ON `stored_responses` (`used_seq`);--> statement-breakpoint
DROP INDEX `idx_messages_session`;--> statement-breakpoint
DROP INDEX `idx_messages_session_active`;--> statement-breakpoint
CREATE INDEX `idx_messages_session_id` ON `messages` (`session_id`);--> statement-breakpoint
DROP INDEX `idx_sessions_lineage_active`;--> statement-breakpoint
CREATE INDEX `idx_sessions_listing` ON `sessions` (`lineage_active_at`,`id`,`archived`,`hidden`,`source`,`lineage_root_id`,`parent_edge`);--> statement-breakpoint
CREATE INDEX `idx_sessions_compression_children` ON `sessions` (`lineage_root_id`) WHERE "sessions"."parent_edge" = 'compression';