import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Rate-limit counters; both databases keep their own. */
export const counters = sqliteTable("counters", {
  key: text("key").primaryKey(),
  state: text("state", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
});
