CREATE TABLE `compaction_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`start_message_id` text NOT NULL,
	`end_message_id` text NOT NULL,
	`summary_depth` integer NOT NULL,
	`start_seq` integer NOT NULL,
	`end_seq` integer NOT NULL,
	`covered_from_seq` integer NOT NULL,
	`covered_through_seq` integer NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer NOT NULL,
	`next_attempt_at` integer,
	`last_error` text,
	`summary_message_id` text,
	`summarizer` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `compaction_jobs_ready` ON `compaction_jobs` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `compaction_jobs_thread_status` ON `compaction_jobs` (`agent_id`,`thread_id`,`status`);--> statement-breakpoint
CREATE TABLE `memory_diagnostics` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`summary_id` text,
	`detail` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `summaries` (
	`message_id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`thread_id` text NOT NULL,
	`summary_depth` integer NOT NULL,
	`start_message_id` text NOT NULL,
	`end_message_id` text NOT NULL,
	`start_seq` integer NOT NULL,
	`end_seq` integer NOT NULL,
	`covered_from_seq` integer NOT NULL,
	`covered_through_seq` integer NOT NULL,
	`summary_content_hash` text NOT NULL,
	`summarizer_contract_version` text NOT NULL,
	`condensed_into` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `summaries_depth_open` ON `summaries` (`summary_depth`,`condensed_into`,`seq`);--> statement-breakpoint
CREATE INDEX `summaries_thread` ON `summaries` (`thread_id`,`summary_depth`,`seq`);--> statement-breakpoint
CREATE TABLE `thread_memory` (
	`thread_id` text PRIMARY KEY NOT NULL,
	`compacted_through_seq` integer NOT NULL,
	`latest_summary_message_id` text NOT NULL,
	`updated_at` text NOT NULL
);
