// Policy, provider secrets and consents, brakes, decisions, trust and approval grants.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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

/** Every version of the tenant's governance policy; the highest `version` is current. Never updated in place. */
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
 * Brakes / kill switches (helper "brakes"): never deleted, released by setting `releasedAtMs`.
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
