-- Issue 12 §8 (session 10): recall's FTS5 index is filled lazily instead of by a trigger on every message insert
-- (the trigger flushed an FTS segment per commit: a message insert cost ~3× one without it). What is indexed is
-- said by the index itself: the rows of its `messages_fts_docsize` shadow table, one per indexed message, keyed
-- by seq. Messages are indexed in seq order, so every indexed message lies below every unindexed one, and
-- `max(id)` of that table is the high-water mark (rows/recall-index.ts indexes what lies above it before any
-- search, and in bounded batches after compaction and in the retention pass). Rows indexed before this migration stay as they are: the mark
-- starts at their newest. Deletes and text updates touch the index only for rows it holds (FTS5's external-content
-- 'delete' of a row it never indexed would corrupt it).
DROP TRIGGER IF EXISTS `messages_fts_ai`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_ad`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_au_old`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_au_new`;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_ad` AFTER DELETE ON `messages` WHEN old.`text` IS NOT NULL AND EXISTS (SELECT 1 FROM `messages_fts_docsize` WHERE `id` = old.`seq`) BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) VALUES ('delete', old.`seq`, old.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_au` AFTER UPDATE OF `text` ON `messages` WHEN old.`seq` <= (SELECT coalesce(max(`id`), 0) FROM `messages_fts_docsize`) BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) SELECT 'delete', old.`seq`, old.`text` WHERE old.`text` IS NOT NULL;
  INSERT INTO `messages_fts`(rowid, `text`) SELECT new.`seq`, new.`text` WHERE new.`text` IS NOT NULL;
END;
