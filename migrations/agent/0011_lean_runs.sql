-- Issue 12 §6 (bytes per turn): the run log and the run trace become WITHOUT ROWID tables keyed by what
-- every reader looks them up by, so the 64-character run key is stored once per row instead of twice
-- (rowid table + its key index). Rows are copied as they are; ids, columns and readers stay the same.
-- run_trace's seq becomes a per-run sequence (readers order a run's rows by it; nothing reads it across runs).
CREATE TABLE `__new_runs` (
	`run_key` text PRIMARY KEY NOT NULL,
	`reason` text NOT NULL,
	`thread_id` text NOT NULL,
	`status` text NOT NULL,
	`attempt` integer NOT NULL,
	`enqueued_at` text NOT NULL,
	`started_at` text,
	`ended_at` text,
	`error_code` text,
	`trace` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_runs` SELECT `run_key`, `reason`, `thread_id`, `status`, `attempt`, `enqueued_at`, `started_at`, `ended_at`, `error_code`, `trace` FROM `runs`;
--> statement-breakpoint
DROP TABLE `runs`;
--> statement-breakpoint
ALTER TABLE `__new_runs` RENAME TO `runs`;
--> statement-breakpoint
CREATE INDEX `runs_enqueued` ON `runs` (`enqueued_at`);
--> statement-breakpoint
CREATE TABLE `__new_run_trace` (
	`run_key` text NOT NULL,
	`seq` integer NOT NULL,
	`kind` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY (`run_key`, `seq`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_run_trace` SELECT `run_key`, `seq`, `kind`, `data`, `created_at` FROM `run_trace`;
--> statement-breakpoint
DROP TABLE `run_trace`;
--> statement-breakpoint
ALTER TABLE `__new_run_trace` RENAME TO `run_trace`;
