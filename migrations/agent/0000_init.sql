CREATE TABLE `agent_meta` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`display_name` text NOT NULL,
	`lifecycle` text NOT NULL,
	`mode` text NOT NULL,
	`allowed_category_ids` text NOT NULL,
	`config` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`destroyed_at` text
);
--> statement-breakpoint
CREATE TABLE `agent_state` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`revision` integer NOT NULL,
	`last_wake_at` text,
	`next_wake_at` text,
	`sleep_until` text,
	`recent_head_message_id` text,
	`latest_summary_message_id` text,
	`consecutive_failure_count` integer NOT NULL,
	`slots` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `counters` (
	`key` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`run_key` text,
	`data` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_run_key` ON `events` (`run_key`);--> statement-breakpoint
CREATE TABLE `messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`thread_id` text NOT NULL,
	`kind` text NOT NULL,
	`text` text,
	`content` text,
	`prev_message_id` text,
	`run_key` text,
	`authority` text,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id` ON `messages` (`id`);--> statement-breakpoint
CREATE INDEX `messages_thread_seq` ON `messages` (`thread_id`,`seq`);--> statement-breakpoint
CREATE TABLE `runs` (
	`run_key` text PRIMARY KEY NOT NULL,
	`reason` text NOT NULL,
	`thread_id` text NOT NULL,
	`status` text NOT NULL,
	`attempt` integer NOT NULL,
	`enqueued_at` text NOT NULL,
	`started_at` text,
	`ended_at` text,
	`error_code` text,
	`trace` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_enqueued` ON `runs` (`enqueued_at`);--> statement-breakpoint
CREATE TABLE `wake_inbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_key` text NOT NULL,
	`reason` text NOT NULL,
	`thread_id` text NOT NULL,
	`authority` text NOT NULL,
	`input` text NOT NULL,
	`enqueued_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `wake_inbox_run_key` ON `wake_inbox` (`run_key`);