CREATE TABLE `tenant_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`agent_id` text,
	`agent_seq` integer,
	`run_key` text,
	`data` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tenant_events_agent_seq` ON `tenant_events` (`agent_id`,`agent_seq`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`body` text,
	`attempts` integer NOT NULL,
	`attempt_log` text NOT NULL,
	`error_code` text,
	`queued_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint` ON `webhook_deliveries` (`endpoint_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_unqueued` ON `webhook_deliveries` (`queued_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`event_types` text NOT NULL,
	`description` text,
	`secret_ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	`deleted_at` text
);
