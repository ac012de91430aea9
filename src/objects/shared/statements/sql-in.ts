import { sql, type SQL } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * `column IN (values)` bound as ONE parameter, a JSON array read back by `json_each`. Durable Object
 * SQLite allows at most 100 bound parameters per statement, so `inArray` over a page of up to 200
 * run keys, or a widget token naming 100 agents plus the page's own conditions, fails with
 * "too many SQL variables"; this form costs one parameter whatever the list's length.
 */
export function inList(column: AnySQLiteColumn, values: ReadonlyArray<string | number>): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
