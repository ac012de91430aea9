CREATE TABLE `brakes` (
	`id` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL,
	`created_at_ms` integer NOT NULL,
	`release_at_ms` integer,
	`released_at_ms` integer,
	`decision_id` text
);
--> statement-breakpoint
CREATE INDEX `brakes_released` ON `brakes` (`released_at_ms`);--> statement-breakpoint
CREATE INDEX `brakes_decision` ON `brakes` (`decision_id`);