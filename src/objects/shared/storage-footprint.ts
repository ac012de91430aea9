import { billedRows, statementsRun, uncounted, type BilledRows } from "./seams/statement-meter";

/** What one Durable Object stores: its SQLite file size and the rows per table (bench seams only). */
export interface StorageFootprint {
  /** SQL statements the object has run since it started (./statement-meter.ts), not counting these reads; null when unmetered. */
  statements: number | null;
  /** Rows read and written as billed (cursor `rowsRead` / `rowsWritten`) since the object started, per table; null when unmetered. */
  billed: BilledRows | null;
  bytes: number;
  /** Virtual tables (FTS5): their `rows` re-read the content table; what they store is in their shadow tables. */
  virtual: string[];
  rows: Record<string, number>;
  /**
   * Payload bytes per table: the sum of its columns' lengths, plus the key columns of each of its indexes
   * (an index stores its key again, with the row's key). No record headers, no page slack. Virtual tables are
   * left out: an FTS5 table's columns read the external content (messages.text) again, while its index is
   * in its shadow tables (`*_data`, `*_idx`, `*_docsize`), which are counted like any table.
   */
  payload: Record<string, number>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const lengthOf = (column: string) => `coalesce(length(${quote(column)}), 0)`;

/**
 * Counts every table's rows (a full count each: for `npm run bench`, never a request path) and reads
 * the database size, which grows in whole pages — so the bench divides a difference over many turns.
 * DO SQLite allows neither `dbstat` nor `PRAGMA page_count`, hence payloads rather than pages per table.
 */
export function storageFootprint(sql: SqlStorage): StorageFootprint {
  return { statements: statementsRun(sql), billed: billedRows(sql), ...uncounted(sql, () => tablesOf(sql)) };
}

function tablesOf(sql: SqlStorage): Omit<StorageFootprint, "statements" | "billed"> {
  const tables = sql
    .exec<{ name: string; virtual: number; withoutRowid: number }>(
      "SELECT name, sql LIKE 'CREATE VIRTUAL TABLE%' AS virtual, sql LIKE '%WITHOUT ROWID%' AS withoutRowid FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
    )
    .toArray();
  const rows: Record<string, number> = {};
  const payload: Record<string, number> = {};
  const virtualTables: string[] = [];
  for (const { name, virtual, withoutRowid } of tables) {
    rows[name] = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${quote(name)}`).one().n;
    if (virtual) {
      virtualTables.push(name);
      continue;
    }
    try {
      const info = sql.exec<{ name: string; pk: number }>("SELECT name, pk FROM pragma_table_info(?)", name).toArray();
      const columns = info.map((c) => lengthOf(c.name));
      const keyColumns = info.filter((c) => c.pk > 0).map((c) => c.name);
      // Every index repeats its own columns and the row's key: the declared key of a WITHOUT ROWID table, else
      // the rowid (counted as 4 bytes). A rowid table's text primary key is such an index too (its autoindex);
      // a WITHOUT ROWID table's primary key is the table itself.
      const indexes = sql.exec<{ name: string; origin: string }>("SELECT name, origin FROM pragma_index_list(?)", name).toArray();
      for (const index of indexes) {
        if (withoutRowid && index.origin === "pk") continue;
        const indexed = sql.exec<{ name: string | null }>("SELECT name FROM pragma_index_info(?)", index.name).toArray().map((c) => c.name).filter((c): c is string => c !== null);
        columns.push(...indexed.map(lengthOf), ...(withoutRowid ? keyColumns.filter((k) => !indexed.includes(k)).map(lengthOf) : ["4"]));
      }
      if (columns.length > 0) payload[name] = sql.exec<{ b: number | null }>(`SELECT sum(${columns.join(" + ")}) AS b FROM ${quote(name)}`).one().b ?? 0;
    } catch {
      // A table whose columns cannot be listed here: rows only.
    }
  }
  return { bytes: sql.databaseSize, virtual: virtualTables, rows, payload };
}
