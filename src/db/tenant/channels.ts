// The tenant event stream, outbound webhooks and metrics.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
 * The tenant-wide event log (SPEC §8 `GET /v1/events/stream`): agents' non-live events forwarded in
 * batches (deduplicated by `(agentId, agentSeq)`) and tenant-level events (`agentSeq` null).
 * `seq` is the SSE id; outbound webhook matching reads from here.
 */
export const tenantEvents = sqliteTable(
  "tenant_events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    type: text("type").notNull(),
    agentId: text("agent_id"),
    agentSeq: integer("agent_seq"),
    runKey: text("run_key"),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [uniqueIndex("tenant_events_agent_seq").on(table.agentId, table.agentSeq)],
);

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
