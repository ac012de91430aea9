import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
    // A plain rowid key: AUTOINCREMENT would write its sqlite_sequence row on every insert (migration 0014).
    seq: integer("seq").primaryKey(),
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

/** The wake-run log: every started run ends in exactly one terminal status (WITHOUT ROWID since migration 0011). */
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

/**
 * Append-only event log, one row per stretch of a run's consecutive events (a chat turn's run is one row): the row
 * holds the events `seq` through `lastSeq`, each event's seq being its SSE id, and `items` lists them in seq order as
 * `[type, createdAt, data]` (StoredEventItem; data in its stored form, events/event-refs.ts). An append extends the
 * newest row when it belongs to the same run (`runKey`, null for agent-level events), else starts a row. `createdAt`
 * is the row's first event's time.
 */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey(),
    lastSeq: integer("last_seq").notNull(),
    runKey: text("run_key"),
    items: text("items", { mode: "json" }).$type<StoredEventItem[]>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("events_run_key").on(table.runKey)],
);

/** One event of an `events` row. */
export type StoredEventItem = [type: string, createdAt: string, data: Record<string, unknown>];

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
    runKey: text("run_key").notNull(),
    /** The row's place in its run (1, 2, …); the table is WITHOUT ROWID keyed (run_key, seq) since migration 0011. */
    seq: integer("seq").notNull(),
    /** `attempt` (provider attempt timeline) | `policy` (a gate's decision) | `usage` (tokens/cost of one model call). */
    kind: text("kind").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.runKey, table.seq] })],
);

/**
 * Daily usage counters (helper "brakes", SPEC §5 budgets): one row per (tenant-local day, dimension,
 * subject). `subject` is "" for the agent-wide total, or a tool name for its per-tool call count.
 */
export const usageDaily = sqliteTable(
  "usage_daily",
  {
    day: text("day").notNull(),
    dimension: text("dimension").notNull(),
    subject: text("subject").notNull(),
    value: integer("value").notNull(),
  },
  (table) => [uniqueIndex("usage_daily_key").on(table.day, table.dimension, table.subject)],
);

/**
 * Persisted compaction jobs (seed 000 §3 "Ordering and durability"; local-only, never synced). The id is
 * `compactionJobId(span)`; times are epoch ms. The ready index serves the worker, the thread index
 * single-flight admission.
 */
export const compactionJobs = sqliteTable(
  "compaction_jobs",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    threadId: text("thread_id").notNull(),
    startMessageId: text("start_message_id").notNull(),
    endMessageId: text("end_message_id").notNull(),
    summaryDepth: integer("summary_depth").notNull(),
    startSeq: integer("start_seq").notNull(),
    endSeq: integer("end_seq").notNull(),
    coveredFromSeq: integer("covered_from_seq").notNull(),
    coveredThroughSeq: integer("covered_through_seq").notNull(),
    /** pending → running → done | failed_terminal */
    status: text("status").notNull(),
    attemptCount: integer("attempt_count").notNull(),
    nextAttemptAt: integer("next_attempt_at"),
    lastError: text("last_error"),
    /** The summary message this job committed (or found already committed), once done. */
    summaryMessageId: text("summary_message_id"),
    summarizer: text("summarizer"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (table) => [index("compaction_jobs_ready").on(table.status, table.nextAttemptAt), index("compaction_jobs_thread_status").on(table.agentId, table.threadId, table.status)],
);

/**
 * Span links of every summary message (seed 000 `summary_start` / `summary_end` edges), with the
 * ordering data the tiers and the pointer need; `condensedInto` is set when a deeper summary commits.
 */
export const summaries = sqliteTable(
  "summaries",
  {
    messageId: text("message_id").primaryKey(),
    seq: integer("seq").notNull(),
    threadId: text("thread_id").notNull(),
    summaryDepth: integer("summary_depth").notNull(),
    startMessageId: text("start_message_id").notNull(),
    endMessageId: text("end_message_id").notNull(),
    startSeq: integer("start_seq").notNull(),
    endSeq: integer("end_seq").notNull(),
    coveredFromSeq: integer("covered_from_seq").notNull(),
    coveredThroughSeq: integer("covered_through_seq").notNull(),
    summaryContentHash: text("summary_content_hash").notNull(),
    summarizerContractVersion: text("summarizer_contract_version").notNull(),
    condensedInto: text("condensed_into"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("summaries_depth_open").on(table.summaryDepth, table.condensedInto, table.seq), index("summaries_thread").on(table.threadId, table.summaryDepth, table.seq)],
);

/** Per-thread compaction pointer: raw messages at or below `compactedThroughSeq` are covered by summaries. */
export const threadMemory = sqliteTable("thread_memory", {
  threadId: text("thread_id").primaryKey(),
  compactedThroughSeq: integer("compacted_through_seq").notNull(),
  latestSummaryMessageId: text("latest_summary_message_id").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Memory diagnostics, append-only (e.g. `summary_content_divergent`: a second commit under one summaryId with other content). */
export const memoryDiagnostics = sqliteTable("memory_diagnostics", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  code: text("code").notNull(),
  summaryId: text("summary_id"),
  detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * Children this agent spawned (SPEC §3 delegation): one row per admitted `spawn_agent` operation,
 * written before the child exists, so a replay of the same operation re-creates nothing.
 * `status` running → completed | failed (the child's delegated run reported back).
 */
export const agentChildren = sqliteTable(
  "agent_children",
  {
    operationId: text("operation_id").primaryKey(),
    childId: text("child_id").notNull(),
    /** The parent's run that spawned the child (its thread receives the report). */
    runKey: text("run_key").notNull(),
    childRunKey: text("child_run_key").notNull(),
    status: text("status").notNull(),
    onComplete: text("on_complete").notNull(),
    tokenBudget: integer("token_budget").notNull(),
    /** Tenant-local day of the spawn: the budget day the tokenBudget was drawn from. */
    spawnDay: text("spawn_day").notNull(),
    request: text("request", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [uniqueIndex("agent_children_child").on(table.childId), index("agent_children_run").on(table.runKey)],
);

/**
 * A child's outbox towards its parent: the projected result of its delegated run, kept until the
 * parent acknowledged it (`deliveredAt`) and the onComplete policy ran (`settledAt`).
 */
export const parentReports = sqliteTable("parent_reports", {
  childRunKey: text("child_run_key").primaryKey(),
  report: text("report", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  deliveredAt: text("delivered_at"),
  settledAt: text("settled_at"),
  createdAt: text("created_at").notNull(),
});

/** How a human (or a timeout) answered an action's approval: the plan's record of what was approved and any modified args. */
export const actionApprovals = sqliteTable("action_approvals", {
  operationId: text("operation_id").primaryKey(),
  decisionId: text("decision_id").notNull(),
  resolutionType: text("resolution_type").notNull(),
  modifiedArgs: text("modified_args", { mode: "json" }).$type<Record<string, unknown>>(),
  resolvedBy: text("resolved_by").notNull(),
  recordedAt: text("recorded_at").notNull(),
});

/**
 * Interactive sessions (SPEC §3): one row per sessionId that has had a user turn. `expiresAt` is the
 * inactivity deadline (last activity + TTL) while open; the session expiry alarm closes due rows in batches.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    sessionId: text("session_id").primaryKey(),
    threadId: text("thread_id").notNull(),
    status: text("status").notNull(),
    openedAt: text("opened_at").notNull(),
    lastActivityAt: text("last_activity_at").notNull(),
    expiresAtMs: integer("expires_at_ms"),
    closedAt: text("closed_at"),
    closeReason: text("close_reason"),
  },
  (table) => [index("sessions_open_expiry").on(table.status, table.expiresAtMs)],
);
