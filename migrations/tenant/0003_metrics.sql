CREATE TABLE `metrics` (
	`name` text NOT NULL,
	`labels` text NOT NULL,
	`value` integer NOT NULL,
	PRIMARY KEY(`name`, `labels`)
);
