-- `messages.seq` becomes a plain INTEGER PRIMARY KEY (no AUTOINCREMENT): AUTOINCREMENT updates the table's
-- `sqlite_sequence` row on every insert, one billed row written and two read per message, and buys only that a seq
-- is never reused after the newest row is deleted — messages are deleted only all at once, by erasure, after which
-- the agent is gone. Every row keeps its seq (recall's FTS index and every cursor name rows by it); the indexes and
-- the recall triggers (dropped with the old table) are made again as they were.
CREATE TABLE `messages_next` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`thread_id` text NOT NULL,
	`kind` text NOT NULL,
	`text` text,
	`content` text,
	`prev_message_id` text,
	`run_key` text,
	`authority` text,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `messages_next` (`seq`, `id`, `thread_id`, `kind`, `text`, `content`, `prev_message_id`, `run_key`, `authority`, `metadata`, `created_at`)
  SELECT `seq`, `id`, `thread_id`, `kind`, `text`, `content`, `prev_message_id`, `run_key`, `authority`, `metadata`, `created_at` FROM `messages`;
--> statement-breakpoint
DROP TABLE `messages`;
--> statement-breakpoint
ALTER TABLE `messages_next` RENAME TO `messages`;
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id` ON `messages` (`id`);
--> statement-breakpoint
CREATE INDEX `messages_thread_seq` ON `messages` (`thread_id`,`seq`);
--> statement-breakpoint
CREATE TRIGGER `messages_fts_ad` AFTER DELETE ON `messages` WHEN old.`text` IS NOT NULL AND EXISTS (SELECT 1 FROM `messages_fts_docsize` WHERE `id` = old.`seq`) BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) VALUES ('delete', old.`seq`, old.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_au` AFTER UPDATE OF `text` ON `messages` WHEN old.`seq` <= (SELECT coalesce(max(`id`), 0) FROM `messages_fts_docsize`) BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) SELECT 'delete', old.`seq`, old.`text` WHERE old.`text` IS NOT NULL;
  INSERT INTO `messages_fts`(rowid, `text`) SELECT new.`seq`, new.`text` WHERE new.`text` IS NOT NULL;
END;
