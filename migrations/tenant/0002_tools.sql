CREATE TABLE `applied_operations` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`result` text NOT NULL,
	`applied_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `decisions` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`run_key` text,
	`operation_id` text,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`payload` text NOT NULL,
	`resolution` text,
	`created_at` text NOT NULL,
	`resolved_at` text
);
--> statement-breakpoint
CREATE INDEX `decisions_status_created` ON `decisions` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `decisions_agent` ON `decisions` (`agent_id`);--> statement-breakpoint
CREATE TABLE `tenant_tools` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`input_schema` text NOT NULL,
	`url` text NOT NULL,
	`method` text NOT NULL,
	`risk_level` text NOT NULL,
	`capability` text NOT NULL,
	`secret_ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `tenant_tools_name` ON `tenant_tools` (`name`);