/**
 * Test seam (the `dumps` seam only): every row of every table of a Durable Object's SQLite,
 * tables listed from sqlite_master with nothing left out, so a test can prove a secret is stored
 * nowhere in plaintext. Blobs are rendered as text (UTF-8, lossy) and hex so a search sees both.
 * workerd hides its key-value table (`_cf_KV`) from sqlite_master and from SQL, so its rows are
 * read through the storage API and listed under that name; any other table SQLite refuses to read
 * says why in its entry.
 */
export type TableDump = Record<string, unknown[]>;

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

function renderValue(value: unknown): unknown {
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    return { blobText: decoder.decode(bytes), blobHex: [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("") };
  }
  return value;
}

export async function dumpTables(storage: DurableObjectStorage): Promise<TableDump> {
  const tables = storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .toArray()
    .map((row) => row.name);
  const dump: TableDump = {};
  for (const table of tables) {
    try {
      dump[table] = storage.sql.exec(`SELECT * FROM "${table.replace(/"/g, '""')}"`).toArray().map((row) => Object.fromEntries(Object.entries(row).map(([column, value]) => [column, renderValue(value)])));
    } catch (error) {
      dump[table] = [{ unreadable: String(error) }];
    }
  }
  dump._cf_KV = await keyValueRows(storage);
  return dump;
}

/** The key-value API's rows (what `ctx.storage.put` stored). */
async function keyValueRows(storage: DurableObjectStorage): Promise<unknown[]> {
  const entries = await storage.list();
  return [...entries].map(([key, value]) => ({ key, value: typeof value === "string" ? value : JSON.stringify(renderValue(value)) ?? String(value) }));
}
