-- The event log keeps one row per stretch of a run's consecutive events instead of one per event: `items` holds the
-- row's events in seq order and `seq`..`last_seq` their seqs, so every event keeps its own seq (the SSE id). Each
-- existing row becomes a row of one event under its own seq. Seqs continue after the newest row's last one (or the
-- retention mark), so none is given twice.
CREATE TABLE `__new_events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`last_seq` integer NOT NULL,
	`run_key` text,
	`items` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_events` (`seq`, `last_seq`, `run_key`, `items`, `created_at`)
  SELECT `seq`, `seq`, `run_key`, json_array(json_array(`type`, `created_at`, json(`data`))), `created_at` FROM `events`;
--> statement-breakpoint
DROP TABLE `events`;
--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;
--> statement-breakpoint
CREATE INDEX `events_run_key` ON `events` (`run_key`);
