import { and, eq, gt, or, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";

/** The cursor of lists ordered oldest first by (createdAt, id). */
export interface CreatedCursor {
  c: string;
  i: string;
}

/** Rows strictly after the cursor in (createdAt, id) order; no condition without a cursor. */
export function afterCreated(columns: { createdAt: AnySQLiteColumn; id: AnySQLiteColumn }, after: CreatedCursor | undefined): SQL | undefined {
  return after ? or(gt(columns.createdAt, after.c), and(eq(columns.createdAt, after.c), gt(columns.id, after.i))) : undefined;
}
