import { Column, getTableColumns, is, Param, Placeholder, SQL, type Table } from "drizzle-orm";

/** What `lean` needs of a drizzle prepared select (durable-sqlite's `SQLiteDOPreparedQuery`). */
interface PreparedSelect<TAll, TGet> {
  all(values?: Record<string, unknown>): TAll;
  get(values?: Record<string, unknown>): TGet;
}

/** drizzle's internals of a prepared query, read once. */
interface PreparedInternals {
  client: { sql: { exec(query: string, ...params: unknown[]): SqlStorageCursor<Record<string, SqlStorageValue>> } };
  query: { sql: string; params: unknown[] };
  fields?: { path: string[]; field: unknown }[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: unknown;
}

type Decode = (value: SqlStorageValue) => unknown;
const identity: Decode = (value) => value;

/**
 * A drizzle prepared select run without drizzle's per-call work (issue 12 §8, session 7): the SQL, the
 * placeholders' positions and each column's decoder are taken from the prepared query once, so a call is
 * one `sql.exec` and a loop over the raw rows. drizzle's own mapping (`mapResultRow`) re-classifies every
 * field of every row with `is()`, which the profile of a turn showed beside SQLite's own time. Same rows,
 * same decoded values (json columns parsed, booleans, timestamps) as the prepared query would return.
 * Queries whose shape needs drizzle's extra handling (left joins that null a table, custom mappers) keep it.
 */
export function lean<TAll, TGet>(prepared: PreparedSelect<TAll, TGet>): PreparedSelect<TAll, TGet> {
  const p = prepared as unknown as PreparedInternals;
  const nullableJoin = p.joinsNotNullableMap !== undefined && Object.values(p.joinsNotNullableMap).some((notNull) => !notNull);
  if (!p.fields || p.customResultMapper || nullableJoin) return prepared;
  const { client } = p;
  const text = p.query.sql;
  const params = p.query.params.map((param): ((values: Record<string, unknown>) => unknown) => {
    if (is(param, Placeholder)) return (values) => placeholderValue(values, param.name);
    if (is(param, Param) && is(param.value, Placeholder)) {
      const { encoder, value } = param;
      return (values) => encoder.mapToDriverValue(placeholderValue(values, value.name));
    }
    return () => param;
  });
  const fields = p.fields.map(({ path, field }) => ({ path, decode: decoderOf(field) }));
  const flat = fields.every((f) => f.path.length === 1);
  const keys = fields.map((f) => f.path[0]!);
  const decoders = fields.map((f) => f.decode);
  const mapRow = flat
    ? flatRowMapper(keys, decoders)
    : (row: SqlStorageValue[]) => {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < fields.length; i++) {
          const { path, decode } = fields[i]!;
          let node = out;
          for (let k = 0; k < path.length - 1; k++) node = (node[path[k]!] ??= {}) as Record<string, unknown>;
          node[path[path.length - 1]!] = row[i] === null ? null : decode(row[i]!);
        }
        return out;
      };
  const exec = (values: Record<string, unknown> = {}) => client.sql.exec(text, ...params.map((param) => param(values))).raw();
  return {
    all: (values) => {
      const rows: unknown[] = [];
      for (const row of exec(values)) rows.push(mapRow(row as SqlStorageValue[]));
      return rows as TAll;
    },
    get: (values) => {
      // drizzle's `get` reads every row and keeps the first; the first one is enough (leaving the loop closes the cursor).
      for (const row of exec(values)) return mapRow(row as SqlStorageValue[]) as TGet;
      return undefined as TGet;
    },
  };
}

/** Maps a raw row (values in key order) to an object of decoded values; SQL NULL stays null. */
function flatRowMapper(keys: readonly string[], decoders: readonly Decode[]): (row: SqlStorageValue[]) => Record<string, unknown> {
  return (row) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) out[keys[i]!] = row[i] === null ? null : decoders[i]!(row[i]!);
    return out;
  };
}

/**
 * Decodes rows of `table`'s columns, selected in `getTableColumns` order at the start of a raw row, as drizzle decodes
 * them (json columns parsed, etc.): for statements drizzle cannot build (a CTE, a compound select of limited branches).
 * The decoders are taken once per table.
 */
export function tableRowDecoder<T>(table: Table): { columns: string[]; decode(raw: SqlStorageValue[]): T } {
  const entries = Object.entries(getTableColumns(table));
  const decode = flatRowMapper(
    entries.map(([key]) => key),
    entries.map(([, column]) => decoderOf(column)),
  );
  return { columns: entries.map(([, column]) => column.name), decode: (raw) => decode(raw) as T };
}

function placeholderValue(values: Record<string, unknown>, name: string): unknown {
  if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`);
  return values[name];
}

function decoderOf(field: unknown): Decode {
  // The same choice as drizzle's mapResultRow: a column decodes itself, an SQL expression through its decoder.
  if (is(field, Column)) return (value) => field.mapFromDriverValue(value);
  // `decoder` is drizzle-internal (not in its types): an SQL expression's, or an aliased expression's inner one.
  type WithDecoder = { decoder?: { mapFromDriverValue(value: unknown): unknown } };
  const decoder = is(field, SQL) ? (field as unknown as WithDecoder).decoder : ((field as { sql?: unknown }).sql as WithDecoder | undefined)?.decoder;
  if (!decoder) return identity;
  return (value) => decoder.mapFromDriverValue(value);
}

/**
 * A hand-written statement (drizzle `sql` with `sql.placeholder`s) built once: drizzle's `db.get(sql…)` renders the
 * template on every call. Rows come back as SQLite returns them (column aliases as keys, nothing decoded).
 */
export function rawStatement<TRow extends Record<string, SqlStorageValue>>(db: object, query: SQL): { all(values?: Record<string, unknown>): TRow[]; get(values?: Record<string, unknown>): TRow | undefined } {
  const exec = compiled(db, query) as (values?: Record<string, unknown>) => SqlStorageCursor<TRow>;
  return {
    all: (values) => exec(values).toArray(),
    get: (values) => {
      for (const row of exec(values)) return row;
      return undefined;
    },
  };
}

/**
 * `rawStatement` returning each row as SQLite's value array (column order of the statement), without building an
 * object per row: for wide rows read often, decoded by position by the caller (issue 12 §8, session 8).
 */
export function rawRowsStatement(db: object, query: SQL): { all(values?: Record<string, unknown>): SqlStorageValue[][] } {
  const exec = compiled(db, query);
  return { all: (values) => Array.from(exec(values).raw()) };
}

/** The statement's SQL rendered once, and a call that binds the placeholders and runs it. */
function compiled(db: object, query: SQL): (values?: Record<string, unknown>) => SqlStorageCursor<Record<string, SqlStorageValue>> {
  const internals = db as { dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } }; $client: PreparedInternals["client"] };
  const built = internals.dialect.sqlToQuery(query);
  const client = internals.$client;
  const params = built.params.map((param): ((values: Record<string, unknown>) => unknown) => (is(param, Placeholder) ? (values) => placeholderValue(values, param.name) : () => param));
  return (values = {}) => client.sql.exec(built.sql, ...params.map((param) => param(values)));
}
