import { sql } from "drizzle-orm";

/**
 * A named placeholder typed as a column's value, for `.set()` of an update prepared once (issue 12 §8, session 11).
 * drizzle's runtime wraps any non-SQL set value in a Param carrying the column's encoder, so a placeholder there is
 * bound through that encoder when the statement runs (json columns stringified), exactly as it does for insert
 * values; only its types leave placeholders out of `.set()`.
 */
export function columnPlaceholder<T>(name: string): T {
  return sql.placeholder(name) as unknown as T;
}
