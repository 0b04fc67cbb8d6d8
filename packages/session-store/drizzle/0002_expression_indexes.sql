-- Expression index behind "order by last active" (last_activity_at, else started_at). drizzle-kit
-- 0.31 renders expression indexes incorrectly, so it lives in this custom migration.
CREATE INDEX IF NOT EXISTS `idx_sessions_effective_activity` ON `sessions` (coalesce(`last_activity_at`, `started_at`) DESC);
