// The tenant's directory of its agents.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
