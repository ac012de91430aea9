CREATE TABLE `usage_daily` (
	`day` text NOT NULL,
	`dimension` text NOT NULL,
	`subject` text NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `usage_daily_key` ON `usage_daily` (`day`,`dimension`,`subject`);