-- Messages are indexed after their commit, in batches (src/fts-indexer.ts), instead of by an insert
-- trigger inside every write transaction: fts5 writes a new segment and its structure record on
-- every commit that touches the index, which was the largest single cost of a one-message write.
-- The watermark state_meta `fts_indexed_through` says which rows are in the index: every message
-- with an id at or below it, and none above it. The catch-up indexes the rows above it and moves it
-- in one transaction. These triggers keep the index in step for indexed rows only: an fts5
-- 'delete' of a row that was never indexed corrupts an external-content index, and a row above the
-- watermark reaches the index through the catch-up, with whatever content it has by then.
-- The FTS rebuild re-runs this file after 0001_fts.sql (every `*_fts*` migration, in order), so it
-- sets the watermark in its own transaction, and a rebuilt index is exactly a migrated one.
DROP TRIGGER IF EXISTS `messages_fts_after_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_after_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_after_update`;
--> statement-breakpoint
-- Every row present is indexed here (0001's triggers and 'rebuild'); ids are AUTOINCREMENT, so no
-- later row can take an id at or below the highest one ever handed out.
INSERT INTO `state_meta`(`key`, `value`)
  SELECT 'fts_indexed_through', max(
    coalesce((SELECT `seq` FROM `sqlite_sequence` WHERE `name` = 'messages'), 0),
    coalesce((SELECT max(`id`) FROM `messages`), 0))
  WHERE true
  ON CONFLICT(`key`) DO UPDATE SET `value` = excluded.`value`;
--> statement-breakpoint
-- Only a row inserted with an explicit id at or below the watermark (a caller's own SQL) fires it.
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_insert` AFTER INSERT ON `messages`
  WHEN new.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through') BEGIN
  INSERT INTO `messages_fts`(rowid, `content`) SELECT `id`, `content` FROM `messages_fts_src` WHERE `id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_delete` AFTER DELETE ON `messages`
  WHEN old.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through') BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `content`) VALUES ('delete', old.`id`, CASE WHEN old.`role` = 'tool' THEN substr(coalesce(old.`content`, ''), 1, 8192) ELSE coalesce(old.`content`, '') END);
END;
--> statement-breakpoint
-- `id` is listed too: a row moved across the watermark leaves the index or waits for the catch-up.
CREATE TRIGGER IF NOT EXISTS `messages_fts_after_update` AFTER UPDATE OF `id`, `content`, `role` ON `messages`
  WHEN old.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through')
    OR new.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through') BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `content`)
    SELECT 'delete', old.`id`, CASE WHEN old.`role` = 'tool' THEN substr(coalesce(old.`content`, ''), 1, 8192) ELSE coalesce(old.`content`, '') END
    WHERE old.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through');
  INSERT INTO `messages_fts`(rowid, `content`)
    SELECT `id`, `content` FROM `messages_fts_src`
    WHERE `id` = new.`id` AND new.`id` <= (SELECT CAST(`value` AS INTEGER) FROM `state_meta` WHERE `key` = 'fts_indexed_through');
END;
