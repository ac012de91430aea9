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
