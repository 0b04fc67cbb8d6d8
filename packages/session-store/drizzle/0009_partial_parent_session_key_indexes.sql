-- Most sessions have no parent and no session key, yet every new session wrote an entry into both
-- indexes (about 2.5 of the 15 pages a new conversation's first transaction writes). Every lookup
-- by either column is an equality, which implies IS NOT NULL, so the partial indexes serve them all.
DROP INDEX `idx_sessions_parent`;--> statement-breakpoint
DROP INDEX `idx_sessions_session_key`;--> statement-breakpoint
CREATE INDEX `idx_sessions_parent` ON `sessions` (`parent_session_id`) WHERE "sessions"."parent_session_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_sessions_session_key` ON `sessions` (`session_key`) WHERE "sessions"."session_key" IS NOT NULL;