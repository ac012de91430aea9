-- The tenant stream keeps one row per run report (or tenant-level event) instead of one per event: `items` holds the
-- row's events in seq order and `seq` is the seq of its last one, so every event keeps its own tenant seq (the SSE id)
-- and a cursor, the retention mark and webhook deliveries mean what they did. Each existing row becomes a row of one
-- event under its own seq. The (agent_id, agent_seq) index goes: a report's events are deduplicated by the agent's
-- report numbering (counters `run-report:<agentId>`), written in the same transaction.
CREATE TABLE `__new_tenant_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text,
	`items` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_tenant_events` (`seq`, `agent_id`, `items`, `created_at`)
  SELECT `seq`, `agent_id`, json_array(json_array(`type`, `agent_seq`, `run_key`, `created_at`, json(`data`))), `created_at` FROM `tenant_events`;
--> statement-breakpoint
-- An empty copy leaves no sequence row behind (a fresh database holds none until its first event).
DELETE FROM `sqlite_sequence` WHERE `name` = '__new_tenant_events' AND `seq` = 0;
--> statement-breakpoint
DROP TABLE `tenant_events`;
--> statement-breakpoint
ALTER TABLE `__new_tenant_events` RENAME TO `tenant_events`;
