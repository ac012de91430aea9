-- `metrics` keyed by (name, labels) WITHOUT ROWID: a rowid table kept its text key twice (the table and its
-- primary-key index), so every run report's counter upsert read the index and then the row. One b-tree now: half the
-- rows read per upsert, the key stored once. Every counter keeps its value.
CREATE TABLE `metrics_next` (
	`name` text NOT NULL,
	`labels` text NOT NULL,
	`value` integer NOT NULL,
	PRIMARY KEY(`name`, `labels`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `metrics_next` (`name`, `labels`, `value`) SELECT `name`, `labels`, `value` FROM `metrics`;
--> statement-breakpoint
DROP TABLE `metrics`;
--> statement-breakpoint
ALTER TABLE `metrics_next` RENAME TO `metrics`;
