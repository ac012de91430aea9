// Tenant HTTP tools and remote MCP servers.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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

/** Remote MCP servers a tenant registered; their tool list is cached here with a version. */
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
