import { and, asc, desc, eq, gt, lt, or, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";

/** The cursor of lists ordered oldest first by (createdAt, id). */
export interface CreatedCursor {
  c: string;
  i: string;
}

/** A keyset position: the sort value of the last row read and, when the sort column is not unique, its id. */
export interface KeysetPosition {
  c: string | number;
  i?: string;
}

/** How one list reads a page: its table, order, filters and where the previous page stopped. */
export interface KeysetQuery<T extends SQLiteTable> {
  table: T;
  /** Sort column, then a unique tie-break (omitted when the sort column is itself unique, e.g. a seq). */
  sort: AnySQLiteColumn;
  tieBreak?: AnySQLiteColumn | undefined;
  order: "asc" | "desc";
  /** Filters of the list; undefined entries are ignored. */
  where?: readonly (SQL | undefined)[] | undefined;
  limit: number;
  /** The position of the previous page's last row: the page starts strictly after it in `order`. */
  from?: KeysetPosition | undefined;
  /** The selection when a column is read through an expression (e.g. messages' resolved `prevMessageId`); default: the table's columns. */
  columns?: Record<string, unknown> | undefined;
}

/**
 * The one keyset pager of both Durable Objects: reads `limit + 1` rows strictly after `from` in the
 * list's order; the extra row only tells that another page exists. `last` is the page's last row when
 * it does, null on the final page, so a list's `nextCursor` is null exactly when nothing follows.
 */
export function keysetPage<T extends SQLiteTable>(
  // Any Durable Object database: the tenant and agent schemas differ, the paging does not.
  db: DrizzleSqliteDODatabase<any>,
  query: KeysetQuery<T>,
): { rows: T["$inferSelect"][]; last: T["$inferSelect"] | null } {
  const { sort, tieBreak, from } = query;
  const beyond = query.order === "asc" ? gt : lt;
  const direction = query.order === "asc" ? asc : desc;
  const position = !from ? undefined : tieBreak && from.i !== undefined ? or(beyond(sort, from.c), and(eq(sort, from.c), beyond(tieBreak, from.i))) : beyond(sort, from.c);
  const rows = (query.columns ? db.select(query.columns as any) : db.select())
    .from(query.table as SQLiteTable)
    .where(and(...(query.where ?? []), position))
    .orderBy(...(tieBreak ? [direction(sort), direction(tieBreak)] : [direction(sort)]))
    .limit(query.limit + 1)
    .all() as T["$inferSelect"][];
  const page = rows.slice(0, query.limit);
  return { rows: page, last: rows.length > query.limit ? (page[page.length - 1] ?? null) : null };
}

/** The (createdAt, id) position of a row, the cursor most lists hand out. */
export const createdKey = (row: { createdAt: string; id: string }): CreatedCursor => ({ c: row.createdAt, i: row.id });

/** One page of a table in (createdAt, id) order after the cursor, and the cursor of the next page (null on the last). */
export function pageByCreated<T extends SQLiteTable & { createdAt: AnySQLiteColumn; id: AnySQLiteColumn }, Out>(
  db: DrizzleSqliteDODatabase<any>,
  table: T,
  limit: number,
  after: CreatedCursor | undefined,
  map: (row: T["$inferSelect"]) => Out,
  where?: readonly (SQL | undefined)[],
): { data: Out[]; last: CreatedCursor | null } {
  const { rows, last } = keysetPage(db, { table, sort: table.createdAt, tieBreak: table.id, order: "asc", where, limit, from: after });
  return { data: rows.map(map), last: last ? createdKey(last as { createdAt: string; id: string }) : null };
}
