// The tenant event stream, outbound webhooks and metrics.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Monotonic per-tenant counters for GET /v1/metrics; `labels` is the canonical `k="v",…` label string. WITHOUT ROWID (migration 0012). */
export const metrics = sqliteTable(
  "metrics",
  {
    name: text("name").notNull(),
    labels: text("labels").notNull(),
    value: integer("value").notNull(),
  },
  (table) => [primaryKey({ columns: [table.name, table.labels] })],
);

/**
 * The tenant-wide event log (`GET /v1/events/stream`): one row per agent run report (its forwarded events) or per
 * tenant-level event. Every event has its own tenant seq, the SSE id: a row holds the consecutive seqs
 * `seq - (number of items) + 1` through `seq`, so `seq` is the row's last event (rows after a cursor are `seq > cursor`,
 * and the pruned mark is the last seq of the pruned rows). `items`: one entry per event, in seq order (TenantStreamItem).
 */
export const tenantEvents = sqliteTable("tenant_events", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  agentId: text("agent_id"),
  items: text("items", { mode: "json" }).$type<TenantStreamItem[]>().notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * One event of a `tenant_events` row: type, the agent's own seq (null for a tenant-level event), run key, time, and
 * data (empty for an agent event: the agent holds it, and a replay reads it back from the agent).
 */
export type TenantStreamItem = [type: string, agentSeq: number | null, runKey: string | null, createdAt: string, data: Record<string, unknown>];

/** Outbound webhook endpoints (SPEC §9); the signing secret is sealed with secret-box and shown once. */
export const webhookEndpoints = sqliteTable("webhook_endpoints", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  eventTypes: text("event_types", { mode: "json" }).$type<string[]>().notNull(),
  description: text("description"),
  secretCiphertext: text("secret_ciphertext").notNull(),
  createdAt: text("created_at").notNull(),
  deletedAt: text("deleted_at"),
});

/**
 * One outbound delivery per (endpoint, tenant event): the exact body bytes (signed anew per attempt),
 * status `pending | delivered | dead | blocked`, and the attempt timeline as JSON (bounded by the retry limit).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id").notNull(),
    eventSeq: integer("event_seq").notNull(),
    /** The agent the event came from (null for tenant-level events): erasing the agent deletes its deliveries. */
    agentId: text("agent_id"),
    eventType: text("event_type").notNull(),
    status: text("status").notNull(),
    body: text("body"),
    attempts: integer("attempts").notNull(),
    attemptLog: text("attempt_log", { mode: "json" }).$type<Array<Record<string, unknown>>>().notNull(),
    errorCode: text("error_code"),
    /** Set once the delivery's first queue message was accepted; null rows are re-sent by the tenant's alarm. */
    queuedAt: text("queued_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("webhook_deliveries_endpoint").on(table.endpointId, table.createdAt, table.id), index("webhook_deliveries_unqueued").on(table.queuedAt)],
);
