import { and, asc, eq, gt, or, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";

/** The cursor of lists ordered oldest first by (createdAt, id). */
export interface CreatedCursor {
  c: string;
  i: string;
}

/** Rows strictly after the cursor in (createdAt, id) order; no condition without a cursor. */
export function afterCreated(columns: { createdAt: AnySQLiteColumn; id: AnySQLiteColumn }, after: CreatedCursor | undefined): SQL | undefined {
  return after ? or(gt(columns.createdAt, after.c), and(eq(columns.createdAt, after.c), gt(columns.id, after.i))) : undefined;
}

/** One page of a table in (createdAt, id) order after the cursor, and the cursor of the next page (null on the last). */
export function pageByCreated<Row extends { createdAt: string; id: string }, Out>(
  // Any Durable Object database: the tenant and agent schemas differ, the two columns do not.
  db: DrizzleSqliteDODatabase<any>,
  table: SQLiteTable & { createdAt: AnySQLiteColumn; id: AnySQLiteColumn },
  limit: number,
  after: CreatedCursor | undefined,
  map: (row: Row) => Out,
): { data: Out[]; last: CreatedCursor | null } {
  const rows = db.select().from(table).where(afterCreated(table, after)).orderBy(asc(table.createdAt), asc(table.id)).limit(limit + 1).all() as Row[];
  const data = rows.slice(0, limit);
  const last = rows.length > limit ? data[data.length - 1]! : null;
  return { data: data.map(map), last: last ? { c: last.createdAt, i: last.id } : null };
}
