CREATE TABLE `action_approvals` (
	`operation_id` text PRIMARY KEY NOT NULL,
	`decision_id` text NOT NULL,
	`resolution_type` text NOT NULL,
	`modified_args` text,
	`resolved_by` text NOT NULL,
	`recorded_at` text NOT NULL
);
