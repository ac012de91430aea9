-- Each column holds what its name says. A run's `started_at` / `ended_at` stored as `+<ms>` (milliseconds after its
-- `enqueued_at`) become the timestamp; a message's `prev_message_id` / `run_key` stored as '' ("the thread's previous
-- message's") become that message's id / run key. A '' run key only ever follows a key stored in full, so one probe of
-- the previous message resolves it.
UPDATE `runs` SET `started_at` = strftime('%Y-%m-%dT%H:%M:%fZ', `enqueued_at`, '+' || (CAST(substr(`started_at`, 2) AS INTEGER) / 1000.0) || ' seconds') WHERE `started_at` LIKE '+%';
--> statement-breakpoint
UPDATE `runs` SET `ended_at` = strftime('%Y-%m-%dT%H:%M:%fZ', `enqueued_at`, '+' || (CAST(substr(`ended_at`, 2) AS INTEGER) / 1000.0) || ' seconds') WHERE `ended_at` LIKE '+%';
--> statement-breakpoint
UPDATE `messages` SET `run_key` = (SELECT `p`.`run_key` FROM `messages` `p` WHERE `p`.`thread_id` = `messages`.`thread_id` AND `p`.`seq` < `messages`.`seq` ORDER BY `p`.`seq` DESC LIMIT 1) WHERE `run_key` = '';
--> statement-breakpoint
UPDATE `messages` SET `prev_message_id` = (SELECT `p`.`id` FROM `messages` `p` WHERE `p`.`thread_id` = `messages`.`thread_id` AND `p`.`seq` < `messages`.`seq` ORDER BY `p`.`seq` DESC LIMIT 1) WHERE `prev_message_id` = '';
