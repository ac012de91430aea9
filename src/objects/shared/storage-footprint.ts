/** What one Durable Object stores: its SQLite file size and the rows per table (bench seams only). */
export interface StorageFootprint {
  bytes: number;
  rows: Record<string, number>;
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
  for (const name of tables) rows[name] = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).one().n;
  return { bytes: sql.databaseSize, rows };
}
