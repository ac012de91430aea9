CREATE TABLE `agent_triggers` (
	`trigger_id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`rotated_at` text,
	`revoked_at` text
);
--> statement-breakpoint
CREATE INDEX `agent_triggers_agent` ON `agent_triggers` (`agent_id`);--> statement-breakpoint
CREATE TABLE `change_units` (
	`counter` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`change_unit_key` text NOT NULL,
	`logical_change_key` text NOT NULL,
	`origin` text NOT NULL,
	`host_id` text NOT NULL,
	`payload_type` text NOT NULL,
	`payload_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `change_units_lck` ON `change_units` (`logical_change_key`);--> statement-breakpoint
CREATE TABLE `inbound_deliveries` (
	`source` text NOT NULL,
	`delivery_id` text NOT NULL,
	`logical_change_key` text NOT NULL,
	`received_at` text NOT NULL,
	PRIMARY KEY(`source`, `delivery_id`)
);
--> statement-breakpoint
CREATE TABLE `journal_entities` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`category_id` text,
	`parent_id` text,
	`version` integer NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `journal_type_created` ON `journal_entities` (`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `journal_category` ON `journal_entities` (`category_id`);--> statement-breakpoint
CREATE INDEX `journal_parent` ON `journal_entities` (`parent_id`);--> statement-breakpoint
CREATE TABLE `notification_batches` (
	`logical_change_key` text PRIMARY KEY NOT NULL,
	`change_unit_keys` text NOT NULL,
	`tokens` text NOT NULL,
	`origin` text NOT NULL,
	`source` text NOT NULL,
	`authority` text NOT NULL,
	`payload` text,
	`matched_count` integer,
	`created_at` text NOT NULL,
	`dispatched_at` text
);
--> statement-breakpoint
CREATE TABLE `subscription_tokens` (
	`token_class` text NOT NULL,
	`token_namespace` text NOT NULL,
	`token_value` text NOT NULL,
	`subscription_id` text NOT NULL,
	`agent_id` text NOT NULL,
	PRIMARY KEY(`token_class`, `token_namespace`, `token_value`, `subscription_id`)
);
--> statement-breakpoint
CREATE INDEX `subscription_tokens_sub` ON `subscription_tokens` (`subscription_id`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`tokens` text NOT NULL,
	`predicate` text,
	`eligibility` text,
	`created_at` text NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE INDEX `subscriptions_agent` ON `subscriptions` (`agent_id`);--> statement-breakpoint
CREATE TABLE `webhook_sources` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`scheme` text NOT NULL,
	`secret_ciphertext` text NOT NULL,
	`token_mapping` text NOT NULL,
	`created_at` text NOT NULL,
	`deleted_at` text
);
