CREATE TABLE `report_heads` (
	`scope` text PRIMARY KEY NOT NULL,
	`report_id` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`scope` text NOT NULL,
	`period_key` text NOT NULL,
	`content` text NOT NULL,
	`confidence` real,
	`provenance` text NOT NULL,
	`source_cursor` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `reports_created` ON `reports` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `reports_scope_created` ON `reports` (`scope`,`created_at`,`id`);