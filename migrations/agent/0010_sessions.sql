CREATE TABLE `sessions` (
	`session_id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`status` text NOT NULL,
	`opened_at` text NOT NULL,
	`last_activity_at` text NOT NULL,
	`expires_at_ms` integer,
	`closed_at` text,
	`close_reason` text
);
--> statement-breakpoint
CREATE INDEX `sessions_open_expiry` ON `sessions` (`status`,`expires_at_ms`);