CREATE TABLE `agent_children` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`child_id` text NOT NULL,
	`run_key` text NOT NULL,
	`child_run_key` text NOT NULL,
	`status` text NOT NULL,
	`on_complete` text NOT NULL,
	`token_budget` integer NOT NULL,
	`spawn_day` text NOT NULL,
	`request` text NOT NULL,
	`result` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_children_child` ON `agent_children` (`child_id`);--> statement-breakpoint
CREATE INDEX `agent_children_run` ON `agent_children` (`run_key`);--> statement-breakpoint
CREATE TABLE `parent_reports` (
	`child_run_key` text PRIMARY KEY NOT NULL,
	`report` text NOT NULL,
	`delivered_at` text,
	`settled_at` text,
	`created_at` text NOT NULL
);
