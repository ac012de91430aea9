// The journal and the tool-saga mutations applied to it.
// One part of the tenant database's schema; src/db/tenant-schema.ts is the whole, as drizzle-kit and the code read it.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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

/** Journal mutations applied by tool sagas, keyed by operationId: phase 1 runs at most once. */
export const appliedOperations = sqliteTable("applied_operations", {
  operationId: text("operation_id").primaryKey(),
  agentId: text("agent_id").notNull(),
  toolName: text("tool_name").notNull(),
  result: text("result", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  appliedAt: text("applied_at").notNull(),
});
