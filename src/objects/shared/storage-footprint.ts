/** What one Durable Object stores: its SQLite file size and the rows per table (bench seams only). */
export interface StorageFootprint {
  bytes: number;
  rows: Record<string, number>;
  /** Payload bytes per table (sum of the columns' lengths; no page or index overhead), where readable. */
  payload: Record<string, number>;
}

/**
 * Counts every table's rows (a full count each: for `npm run bench`, never a request path) and reads
 * the database size, which grows in whole pages — so the bench divides a difference over many turns.
 */
export function storageFootprint(sql: SqlStorage): StorageFootprint {
  const tables = sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name")
    .toArray()
    .map((row) => row.name);
  const rows: Record<string, number> = {};
  const payload: Record<string, number> = {};
  for (const name of tables) {
    const quoted = `"${name.replace(/"/g, '""')}"`;
    rows[name] = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${quoted}`).one().n;
    try {
      const columns = sql.exec<{ name: string }>("SELECT name FROM pragma_table_info(?)", name).toArray().map((c) => `coalesce(length("${c.name.replace(/"/g, '""')}"), 0)`);
      if (columns.length > 0) payload[name] = sql.exec<{ b: number | null }>(`SELECT sum(${columns.join(" + ")}) AS b FROM ${quoted}`).one().b ?? 0;
    } catch {
      // A table whose columns cannot be listed here (virtual tables): rows only.
    }
  }
  return { bytes: sql.databaseSize, rows, payload };
}
