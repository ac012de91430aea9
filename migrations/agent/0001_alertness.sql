CREATE TABLE `scheduler_decisions` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`timer_id` text NOT NULL,
	`action` text NOT NULL,
	`run_key` text,
	`decision` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scheduler_decisions_timer` ON `scheduler_decisions` (`timer_id`,`seq`);--> statement-breakpoint
CREATE TABLE `timers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text,
	`spec` text NOT NULL,
	`catchup_policy` text NOT NULL,
	`catchup_window_seconds` integer NOT NULL,
	`next_run_at` integer,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
