-- Recall (SPEC §7): an external-content FTS5 index over messages.text (summaries are messages too),
-- kept in step by triggers; rowid is messages.seq. Existing rows are backfilled below.
CREATE VIRTUAL TABLE `messages_fts` USING fts5(`text`, content='messages', content_rowid='seq', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `messages_fts_ai` AFTER INSERT ON `messages` WHEN new.`text` IS NOT NULL BEGIN
  INSERT INTO `messages_fts`(rowid, `text`) VALUES (new.`seq`, new.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_ad` AFTER DELETE ON `messages` WHEN old.`text` IS NOT NULL BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) VALUES ('delete', old.`seq`, old.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_au_old` AFTER UPDATE OF `text` ON `messages` WHEN old.`text` IS NOT NULL BEGIN
  INSERT INTO `messages_fts`(`messages_fts`, rowid, `text`) VALUES ('delete', old.`seq`, old.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_au_new` AFTER UPDATE OF `text` ON `messages` WHEN new.`text` IS NOT NULL BEGIN
  INSERT INTO `messages_fts`(rowid, `text`) VALUES (new.`seq`, new.`text`);
END;
--> statement-breakpoint
INSERT INTO `messages_fts`(rowid, `text`) SELECT `seq`, `text` FROM `messages` WHERE `text` IS NOT NULL;
