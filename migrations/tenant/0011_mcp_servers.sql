CREATE TABLE `mcp_call_intents` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`server_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`sent_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `mcp_servers` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`secret_ref_id` text,
	`risk_level` text NOT NULL,
	`capability` text NOT NULL,
	`tool_filter` text,
	`tools` text NOT NULL,
	`tools_version` integer NOT NULL,
	`tools_fetched_at` integer NOT NULL,
	`last_error` text,
	`created_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `mcp_servers_name` ON `mcp_servers` (`name`);