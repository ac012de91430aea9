CREATE TABLE `approval_grants` (
	`agent_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`decision_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`agent_id`, `thread_id`, `tool_name`)
);
--> statement-breakpoint
CREATE TABLE `approval_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `trust_records` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`updated_at` text NOT NULL
);
