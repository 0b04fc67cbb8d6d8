-- The expression index of 0002 (coalesce(last_activity_at, started_at)) ordered listings before
-- they moved to lineage_active_at; no query uses it any more, and every append had to rewrite it.
DROP INDEX IF EXISTS `idx_sessions_effective_activity`;
