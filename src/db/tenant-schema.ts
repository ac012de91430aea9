import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const tenant = sqliteTable("tenant", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  timeZone: text("time_zone").notNull(),
  createdAt: text("created_at").notNull(),
});

/** API keys: only the SHA-256 of the secret is stored. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    hash: text("hash").notNull(),
    prefix: text("prefix").notNull(),
    name: text("name"),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: text("created_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (table) => [uniqueIndex("api_keys_hash").on(table.hash)],
);

/** The tenant's agent directory (the agent's own DO holds the record of truth). */
export const agentDirectory = sqliteTable(
  "agent_directory",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    displayName: text("display_name").notNull(),
    lifecycle: text("lifecycle").notNull(),
    parentId: text("parent_id"),
    /** Snapshot of the agent's public record, refreshed by the AgentDO on every change. */
    record: text("record", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("agent_directory_created").on(table.createdAt, table.id)],
);

/** Idempotency-Key records: same key + same body → the stored response. */
export const idempotency = sqliteTable(
  "idempotency",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    status: integer("status"),
    response: text("response"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.scope, table.key] })],
);


/** Append-only audit log. */
export const audit = sqliteTable("audit", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  at: text("at").notNull(),
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  target: text("target"),
  detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
});

export { counters } from "./common-schema";

/**
 * The journal domain: every entity kind in one table, validated per `type` at the edge. A generic
 * store keeps CRUD, change units and predicate lookups one code path for all kinds.
 * Kinds: category, task, checklist, checklist_item, time_entry, day_plan, rating, entry.
 */
export const journalEntities = sqliteTable(
  "journal_entities",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    categoryId: text("category_id"),
    /** checklist → task, checklist_item → checklist, time_entry → task, rating → its target. */
    parentId: text("parent_id"),
    version: integer("version").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    deletedAt: text("deleted_at"),
  },
  (table) => [
    index("journal_type_created").on(table.type, table.createdAt, table.id),
    index("journal_category").on(table.categoryId),
    index("journal_parent").on(table.parentId),
  ],
);

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

/** Journal mutations applied by tool sagas, keyed by operationId: phase 1 runs at most once. */
export const appliedOperations = sqliteTable("applied_operations", {
  operationId: text("operation_id").primaryKey(),
  agentId: text("agent_id").notNull(),
  toolName: text("tool_name").notNull(),
  result: text("result", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  appliedAt: text("applied_at").notNull(),
});

/** Tenant-registered HTTP tools; the request-signing secret is stored encrypted. */
export const tenantTools = sqliteTable(
  "tenant_tools",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    inputSchema: text("input_schema", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    url: text("url").notNull(),
    method: text("method").notNull(),
    riskLevel: text("risk_level").notNull(),
    capability: text("capability").notNull(),
    secretCiphertext: text("secret_ciphertext").notNull(),
    createdAt: text("created_at").notNull(),
    deletedAt: text("deleted_at"),
  },
  (table) => [index("tenant_tools_name").on(table.name)],
);

/** Seed 002 decisions (tool approvals, options, ask_user questions), tenant-wide. */
export const decisions = sqliteTable(
  "decisions",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    runKey: text("run_key"),
    operationId: text("operation_id"),
    type: text("type").notNull(),
    status: text("status").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    resolution: text("resolution", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
    resolvedAt: text("resolved_at"),
  },
  (table) => [index("decisions_status_created").on(table.status, table.createdAt), index("decisions_agent").on(table.agentId)],
);

/** Monotonic per-tenant counters for GET /v1/metrics; `labels` is the canonical `k="v",…` label string. */
export const metrics = sqliteTable(
  "metrics",
  {
    name: text("name").notNull(),
    labels: text("labels").notNull(),
    value: integer("value").notNull(),
  },
  (table) => [primaryKey({ columns: [table.name, table.labels] })],
);

/** Every version of the tenant's governance policy (SPEC §5–§6); the highest `version` is current. Never updated in place. */
export const policy = sqliteTable("policy", {
  version: integer("version").primaryKey(),
  body: text("body", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  actor: text("actor").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Provider API keys, sealed with secret-box (purpose providerSecret, bound to the row id); revoking wipes the ciphertext. */
export const providerSecrets = sqliteTable("provider_secrets", {
  id: text("id").primaryKey(),
  provider: text("provider").notNull(),
  name: text("name"),
  ciphertext: text("ciphertext").notNull(),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
});

/** Privacy receipts: one per (provider endpoint, model, provider policyVersion). */
export const providerConsents = sqliteTable(
  "provider_consents",
  {
    id: text("id").primaryKey(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    policyVersion: text("policy_version").notNull(),
    actor: text("actor").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [uniqueIndex("provider_consents_key").on(table.provider, table.model, table.policyVersion)],
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

/**
 * Brakes / kill switches (helper "brakes", SPEC §5): never deleted, released by setting `releasedAtMs`.
 * `body` is the core `Brake`; the columns beside it serve lookups (active set, timer releases).
 */
export const brakes = sqliteTable(
  "brakes",
  {
    id: text("id").primaryKey(),
    body: text("body", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAtMs: integer("created_at_ms").notNull(),
    releaseAtMs: integer("release_at_ms"),
    releasedAtMs: integer("released_at_ms"),
    decisionId: text("decision_id"),
  },
  (table) => [index("brakes_released").on(table.releasedAtMs), index("brakes_decision").on(table.decisionId)],
);

/** Seed 002 trust engine: one record per agent (helper "approvals"). `state` is the core `TrustState`; never shown to agents. */
export const trustRecords = sqliteTable("trust_records", {
  agentId: text("agent_id").primaryKey(),
  state: text("state", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** `alwaysApprove` grants: later calls of `toolName` in that thread skip approval (seed 002, session-scoped = thread). */
export const approvalGrants = sqliteTable(
  "approval_grants",
  {
    agentId: text("agent_id").notNull(),
    threadId: text("thread_id").notNull(),
    toolName: text("tool_name").notNull(),
    decisionId: text("decision_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.agentId, table.threadId, table.toolName] })],
);

/** Small per-tenant approval settings (the decision tick length a test may shrink). */
export const approvalSettings = sqliteTable("approval_settings", {
  key: text("key").primaryKey(),
  value: text("value", { mode: "json" }).$type<unknown>().notNull(),
});

/** Remote MCP servers a tenant registered (issue 15); their tool list is cached here with a version. */
export const mcpServers = sqliteTable(
  "mcp_servers",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    url: text("url").notNull(),
    /** A provider secret stored for `mcp-<name>`, sent as a bearer token; null: no auth. */
    secretRefId: text("secret_ref_id"),
    riskLevel: text("risk_level").notNull(),
    capability: text("capability").notNull(),
    toolFilter: text("tool_filter", { mode: "json" }).$type<string[]>(),
    /** The server's tools as last listed (name, description, inputSchema, annotations). */
    tools: text("tools", { mode: "json" }).$type<unknown[]>().notNull(),
    toolsVersion: integer("tools_version").notNull(),
    /** When the list was fetched; 0 (epoch) marks it stale (a list_changed notification). */
    toolsFetchedAt: integer("tools_fetched_at").notNull(),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    deletedAt: text("deleted_at"),
  },
  (table) => [index("mcp_servers_name").on(table.name)],
);

/**
 * The intent of a mutating MCP call, written before its request leaves (MCP has no idempotency):
 * a replay that finds an intent without a recorded outcome never sends again (at-most-once).
 */
export const mcpCallIntents = sqliteTable("mcp_call_intents", {
  operationId: text("operation_id").primaryKey(),
  serverId: text("server_id").notNull(),
  toolName: text("tool_name").notNull(),
  sentAt: text("sent_at").notNull(),
});
