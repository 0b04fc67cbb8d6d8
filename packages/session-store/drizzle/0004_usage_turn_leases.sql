CREATE TABLE `conversation_generations` (
	`source` text NOT NULL,
	`session_key` text NOT NULL,
	`generation` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`source`, `session_key`)
);
--> statement-breakpoint
CREATE TABLE `session_turn_leases` (
	`conversation_id` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`acquired_at` real NOT NULL,
	`expires_at` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idx_session_turn_leases_expires` ON `session_turn_leases` (`expires_at`);--> statement-breakpoint
CREATE TABLE `system_prompts` (
	`hash` text PRIMARY KEY NOT NULL,
	`prompt` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `messages` ADD `api_content` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `api_call_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `cache_read_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `cache_write_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `reasoning_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `estimated_cost_usd` real DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `billing_provider` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `billing_base_url` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `system_prompt_hash` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `tool_names` text;--> statement-breakpoint
CREATE INDEX `idx_sessions_system_prompt` ON `sessions` (`system_prompt_hash`);