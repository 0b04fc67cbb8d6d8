-- Full-text search over message text. drizzle-kit cannot express FTS5 tables or triggers, so this
-- custom migration is their single source of truth: the FTS rebuild re-runs this file verbatim.
-- Tool rows are truncated to 8192 characters so huge tool output does not bloat the index.
CREATE VIEW IF NOT EXISTS `messages_fts_src` AS
  SELECT `id`, CASE WHEN `role` = 'tool' THEN substr(coalesce(`content`, ''), 1, 8192) ELSE coalesce(`content`, '') END AS `content`
  FROM `messages`;
--> statement-breakpoint
CREATE VIRTUAL TABLE IF NOT EXISTS `messages_fts` USING fts5(`content`, content='messages_fts_src', content_rowid='id');
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_insert` AFTER INSERT ON `messages` BEGIN
  INSERT INTO `messages_fts`(rowid, `content`) VALUES (new.`id`, CASE WHEN new.`role` = 'tool' THEN substr(coalesce(new.`content`, ''), 1, 8192) ELSE coalesce(new.`content`, '') END);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_delete` AFTER DELETE ON `messages` BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `content`) VALUES ('delete', old.`id`, CASE WHEN old.`role` = 'tool' THEN substr(coalesce(old.`content`, ''), 1, 8192) ELSE coalesce(old.`content`, '') END);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_update` AFTER UPDATE OF `content`, `role` ON `messages` BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `content`) VALUES ('delete', old.`id`, CASE WHEN old.`role` = 'tool' THEN substr(coalesce(old.`content`, ''), 1, 8192) ELSE coalesce(old.`content`, '') END);
  INSERT INTO `messages_fts`(rowid, `content`) VALUES (new.`id`, CASE WHEN new.`role` = 'tool' THEN substr(coalesce(new.`content`, ''), 1, 8192) ELSE coalesce(new.`content`, '') END);
END;
--> statement-breakpoint
INSERT INTO `messages_fts`(`messages_fts`) VALUES ('rebuild');
