CREATE TABLE `policy` (
	`version` integer PRIMARY KEY NOT NULL,
	`body` text NOT NULL,
	`actor` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `provider_consents` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`policy_version` text NOT NULL,
	`actor` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `provider_consents_key` ON `provider_consents` (`provider`,`model`,`policy_version`);--> statement-breakpoint
CREATE TABLE `provider_secrets` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`name` text,
	`ciphertext` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
