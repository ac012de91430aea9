import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** The agent's identity and configuration (one row). */
export const agentMeta = sqliteTable("agent_meta", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  kind: text("kind").notNull(),
  displayName: text("display_name").notNull(),
  lifecycle: text("lifecycle").notNull(),
  mode: text("mode").notNull(),
  allowedCategoryIds: text("allowed_category_ids", { mode: "json" }).$type<string[]>().notNull(),
  config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  version: integer("version").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  destroyedAt: text("destroyed_at"),
});

/** Seed 000 AgentState (one row). */
export const agentState = sqliteTable("agent_state", {
  agentId: text("agent_id").primaryKey(),
  revision: integer("revision").notNull(),
  lastWakeAt: text("last_wake_at"),
  nextWakeAt: text("next_wake_at"),
  sleepUntil: text("sleep_until"),
  recentHeadMessageId: text("recent_head_message_id"),
  latestSummaryMessageId: text("latest_summary_message_id"),
  consecutiveFailureCount: integer("consecutive_failure_count").notNull(),
  slots: text("slots", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
});

/** Immutable, linked messages: one row per message, never rewritten. */
export const messages = sqliteTable(
  "messages",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    threadId: text("thread_id").notNull(),
    kind: text("kind").notNull(),
    text: text("text"),
    content: text("content", { mode: "json" }).$type<unknown>(),
    prevMessageId: text("prev_message_id"),
    runKey: text("run_key"),
    authority: text("authority"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [uniqueIndex("messages_id").on(table.id), index("messages_thread_seq").on(table.threadId, table.seq)],
);

/** Persisted wakes waiting for (or in) their run; the runKey is the dedupe key. */
export const wakeInbox = sqliteTable(
  "wake_inbox",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    runKey: text("run_key").notNull(),
    reason: text("reason").notNull(),
    threadId: text("thread_id").notNull(),
    authority: text("authority").notNull(),
    input: text("input", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    enqueuedAt: text("enqueued_at").notNull(),
  },
  (table) => [uniqueIndex("wake_inbox_run_key").on(table.runKey)],
);

/** The wake-run log: every started run ends in exactly one terminal status. */
export const runs = sqliteTable(
  "runs",
  {
    runKey: text("run_key").primaryKey(),
    reason: text("reason").notNull(),
    threadId: text("thread_id").notNull(),
    status: text("status").notNull(),
    attempt: integer("attempt").notNull(),
    enqueuedAt: text("enqueued_at").notNull(),
    startedAt: text("started_at"),
    endedAt: text("ended_at"),
    errorCode: text("error_code"),
    trace: text("trace", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  (table) => [index("runs_enqueued").on(table.enqueuedAt)],
);

/** Append-only event log; `seq` is the SSE id. */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    type: text("type").notNull(),
    runKey: text("run_key"),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("events_run_key").on(table.runKey)],
);


export { counters } from "./common-schema";

/** The agent's timers; `nextRunAt` (epoch ms) arms the DO alarm at the earliest due item. */
export const timers = sqliteTable("timers", {
  id: text("id").primaryKey(),
  name: text("name"),
  spec: text("spec", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  catchupPolicy: text("catchup_policy").notNull(),
  catchupWindowSeconds: integer("catchup_window_seconds").notNull(),
  nextRunAt: integer("next_run_at"),
  status: text("status").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Every scheduler decision (fire, catch-up, skip, reschedule, manual trigger), append-only. */
export const schedulerDecisions = sqliteTable(
  "scheduler_decisions",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    timerId: text("timer_id").notNull(),
    action: text("action").notNull(),
    runKey: text("run_key"),
    decision: text("decision", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("scheduler_decisions_timer").on(table.timerId, table.seq)],
);

/**
 * Planned tool actions (seed 000 §4.3.1): persisted with their actionStableId and operationId
 * before anything executes, so a replayed run reuses the plan instead of regenerating it.
 */
export const actions = sqliteTable(
  "actions",
  {
    operationId: text("operation_id").primaryKey(),
    runKey: text("run_key").notNull(),
    step: integer("step").notNull(),
    callIndex: integer("call_index").notNull(),
    toolCallId: text("tool_call_id").notNull(),
    toolName: text("tool_name").notNull(),
    toolVersion: text("tool_version").notNull(),
    args: text("args", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    actionStableId: text("action_stable_id").notNull(),
    riskLevel: text("risk_level").notNull(),
    previewOnly: integer("preview_only", { mode: "boolean" }).notNull(),
    /** The full seed 000 §4.3.1 action envelope as planned (verified on reuse). */
    envelope: text("envelope", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** planned → executing → completed | failed (awaiting_approval while a decision is open). */
    status: text("status").notNull(),
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("actions_run_step").on(table.runKey, table.step, table.callIndex)],
);

/** Seed 000 `AgentReport`: immutable snapshots, never updated or deleted (times are epoch ms). */
export const reports = sqliteTable(
  "reports",
  {
    id: text("id").primaryKey(),
    scope: text("scope").notNull(),
    periodKey: text("period_key").notNull(),
    content: text("content", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    confidence: real("confidence"),
    provenance: text("provenance", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    sourceCursor: text("source_cursor", { mode: "json" }).$type<Record<string, number>>().notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [index("reports_created").on(table.createdAt, table.id), index("reports_scope_created").on(table.scope, table.createdAt, table.id)],
);

/** Seed 000 `AgentReportHead`: the latest report of each scope; `updatedAt` (epoch ms) is what freshness ages from. */
export const reportHeads = sqliteTable("report_heads", {
  scope: text("scope").primaryKey(),
  reportId: text("report_id").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * What a run did beyond its messages, one row per entry: provider attempts, policy decisions,
 * usage. Rows are written as things happen, so a run parked on a saga or cut short by a crash keeps
 * its trace; `GET …/runs/:runKey` assembles them.
 */
export const runTrace = sqliteTable(
  "run_trace",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    runKey: text("run_key").notNull(),
    /** `attempt` (provider attempt timeline) | `policy` (a gate's decision) | `usage` (tokens/cost of one model call). */
    kind: text("kind").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("run_trace_run").on(table.runKey, table.seq)],
);
