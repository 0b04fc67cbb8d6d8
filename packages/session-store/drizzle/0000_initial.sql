CREATE TABLE `async_delegations` (
	`delegation_id` text PRIMARY KEY NOT NULL,
	`session_key` text,
	`origin_ui_session_id` text,
	`parent_session_id` text,
	`state` text DEFAULT 'running' NOT NULL,
	`delivery_state` text DEFAULT 'pending' NOT NULL,
	`owner_pid` integer NOT NULL,
	`owner_started_at` text,
	`task_json` text NOT NULL,
	`result_json` text,
	`error` text,
	`dispatched_at` real NOT NULL,
	`completed_at` real,
	`delivery_attempts` integer DEFAULT 0 NOT NULL,
	`claim_expires_at` real,
	`not_before` real,
	`settled_at` real
);
--> statement-breakpoint
CREATE INDEX `idx_async_delegations_state` ON `async_delegations` (`state`,`delivery_state`);--> statement-breakpoint
CREATE TABLE `delivery_obligations` (
	`obligation_id` text PRIMARY KEY NOT NULL,
	`session_key` text NOT NULL,
	`platform` text NOT NULL,
	`chat_id` text NOT NULL,
	`thread_id` text,
	`content` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`needs_marker` integer DEFAULT 0 NOT NULL,
	`owner_pid` integer,
	`owner_started_at` text,
	`delivery_fence` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`not_before` real,
	`created_at` real NOT NULL,
	`updated_at` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idx_delivery_obligations_state` ON `delivery_obligations` (`state`,`platform`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`role` text NOT NULL,
	`content` text,
	`tool_call_id` text,
	`tool_calls` text,
	`tool_name` text,
	`timestamp` real NOT NULL,
	`token_count` integer,
	`finish_reason` text,
	`reasoning` text,
	`reasoning_content` text,
	`reasoning_details` text,
	`codex_reasoning_items` text,
	`codex_message_items` text,
	`platform_message_id` text,
	`_compressed_summary` integer DEFAULT 0 NOT NULL,
	`active` integer DEFAULT 1 NOT NULL,
	`display_kind` text,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idx_messages_session` ON `messages` (`session_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `idx_messages_session_active` ON `messages` (`session_id`,`active`,`id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`profile_name` text,
	`user_id` text,
	`session_key` text,
	`chat_id` text,
	`chat_type` text,
	`thread_id` text,
	`model` text,
	`model_config` text,
	`cwd` text,
	`parent_session_id` text,
	`parent_edge` text,
	`lineage_root_id` text NOT NULL,
	`lineage_active_at` real,
	`started_at` real NOT NULL,
	`last_activity_at` real,
	`last_read_at` real,
	`ended_at` real,
	`end_reason` text,
	`title` text,
	`title_source` text,
	`archived` integer DEFAULT 0 NOT NULL,
	`auto_archived` integer DEFAULT 0 NOT NULL,
	`pinned` integer DEFAULT 0 NOT NULL,
	`hidden` integer DEFAULT 0 NOT NULL,
	`resume_pending` integer DEFAULT 0 NOT NULL,
	`resume_reason` text,
	`message_count` integer DEFAULT 0 NOT NULL,
	`tool_call_count` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idx_sessions_source` ON `sessions` (`source`);--> statement-breakpoint
CREATE INDEX `idx_sessions_parent` ON `sessions` (`parent_session_id`);--> statement-breakpoint
CREATE INDEX `idx_sessions_started` ON `sessions` (`started_at`);--> statement-breakpoint
CREATE INDEX `idx_sessions_session_key` ON `sessions` (`session_key`);--> statement-breakpoint
CREATE INDEX `idx_sessions_lineage_root` ON `sessions` (`lineage_root_id`);--> statement-breakpoint
CREATE INDEX `idx_sessions_lineage_active` ON `sessions` (`lineage_active_at`,`id`);--> statement-breakpoint
CREATE INDEX `idx_sessions_pinned` ON `sessions` (`pinned`) WHERE "sessions"."pinned" = 1;--> statement-breakpoint
CREATE UNIQUE INDEX `idx_sessions_title_unique` ON `sessions` (`title`) WHERE "sessions"."title" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `state_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text
);
