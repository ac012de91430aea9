// Seed 000 change provenance, subscriptions and their token index, and the inbound deliveries that wake agents.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Seed 000 change units committed by this tenant (hostId = the tenant); `counter` is monotonic. */
export const changeUnits = sqliteTable(
  "change_units",
  {
    counter: integer("counter").primaryKey({ autoIncrement: true }),
    changeUnitKey: text("change_unit_key").notNull(),
    logicalChangeKey: text("logical_change_key").notNull(),
    origin: text("origin").notNull(),
    hostId: text("host_id").notNull(),
    payloadType: text("payload_type").notNull(),
    payloadId: text("payload_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("change_units_lck").on(table.logicalChangeKey)],
);

/** One row per NotificationBatch (keyed by logicalChangeKey: a replayed batch is recognised). */
export const notificationBatches = sqliteTable("notification_batches", {
  logicalChangeKey: text("logical_change_key").primaryKey(),
  changeUnitKeys: text("change_unit_keys", { mode: "json" }).$type<string[]>().notNull(),
  tokens: text("tokens", { mode: "json" }).$type<unknown[]>().notNull(),
  origin: text("origin").notNull(),
  /** Who produced it: `journal`, `event:<source>`, `webhook:<sourceId>`, `agent:<agentId>`. */
  source: text("source").notNull(),
  authority: text("authority").notNull(),
  payload: text("payload", { mode: "json" }).$type<unknown>(),
  matchedCount: integer("matched_count"),
  createdAt: text("created_at").notNull(),
  dispatchedAt: text("dispatched_at"),
  /** Agent hops from the original cause: 0 for API, event and webhook writes; a run's activity adds one. */
  cascadeDepth: integer("cascade_depth").notNull().default(0),
});

export const subscriptions = sqliteTable(
  "subscriptions",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    tokens: text("tokens", { mode: "json" }).$type<unknown[]>().notNull(),
    predicate: text("predicate", { mode: "json" }).$type<unknown>(),
    eligibility: text("eligibility", { mode: "json" }).$type<unknown>(),
    /** Wakes of this subscription run in this conversation (`<agentId>:session:<sessionId>`) instead of a thread of their own. */
    sessionId: text("session_id"),
    createdAt: text("created_at").notNull(),
    deletedAt: text("deleted_at"),
  },
  (table) => [index("subscriptions_agent").on(table.agentId)],
);

/** The materialized token index: (class, namespace, value) → subscription. */
export const subscriptionTokens = sqliteTable(
  "subscription_tokens",
  {
    tokenClass: text("token_class").notNull(),
    tokenNamespace: text("token_namespace").notNull(),
    tokenValue: text("token_value").notNull(),
    subscriptionId: text("subscription_id").notNull(),
    agentId: text("agent_id").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.tokenClass, table.tokenNamespace, table.tokenValue, table.subscriptionId] }),
    index("subscription_tokens_sub").on(table.subscriptionId),
  ],
);

/** Dedupe of inbound deliveries (`POST /v1/events`, webhook sources, triggers) by (source, deliveryId). */
export const inboundDeliveries = sqliteTable(
  "inbound_deliveries",
  {
    source: text("source").notNull(),
    deliveryId: text("delivery_id").notNull(),
    logicalChangeKey: text("logical_change_key").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.source, table.deliveryId] })],
);

/** Tenant webhook sources; the signing secret is stored AES-GCM encrypted under VIGIL_MASTER_KEY. */
export const webhookSources = sqliteTable("webhook_sources", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  scheme: text("scheme").notNull(),
  secretCiphertext: text("secret_ciphertext").notNull(),
  tokenMapping: text("token_mapping", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  createdAt: text("created_at").notNull(),
  deletedAt: text("deleted_at"),
});

/** One external trigger per agent (holon); only the URL secret's hash is stored. */
export const agentTriggers = sqliteTable(
  "agent_triggers",
  {
    triggerId: text("trigger_id").primaryKey(),
    agentId: text("agent_id").notNull(),
    secretHash: text("secret_hash").notNull(),
    status: text("status").notNull(),
    createdAt: text("created_at").notNull(),
    rotatedAt: text("rotated_at"),
    revokedAt: text("revoked_at"),
  },
  (table) => [index("agent_triggers_agent").on(table.agentId)],
);
