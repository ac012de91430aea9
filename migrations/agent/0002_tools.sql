CREATE TABLE `actions` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`run_key` text NOT NULL,
	`step` integer NOT NULL,
	`call_index` integer NOT NULL,
	`tool_call_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`tool_version` text NOT NULL,
	`args` text NOT NULL,
	`action_stable_id` text NOT NULL,
	`risk_level` text NOT NULL,
	`preview_only` integer NOT NULL,
	`envelope` text NOT NULL,
	`status` text NOT NULL,
	`result` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `actions_run_step` ON `actions` (`run_key`,`step`,`call_index`);