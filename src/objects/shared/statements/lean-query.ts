import { Column, getTableColumns, is, Param, Placeholder, SQL, type Table } from "drizzle-orm";

/** What `lean` needs of a drizzle prepared select (durable-sqlite's `SQLiteDOPreparedQuery`). */
export interface PreparedSelect<TAll, TGet> {
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
  const plan = leanPlan(prepared);
  return plan ? bindLean<TAll, TGet>(plan, (prepared as unknown as PreparedInternals).client) : prepared;
}

/** A SQLite client as drizzle's durable-sqlite session uses it (the object's storage, or the row meter's wrapper). */
export type SqlClient = PreparedInternals["client"];

/**
 * What `lean` takes from a prepared select, free of any one database: the SQL, each parameter as a function of the
 * call's placeholder values, the row mapper, and a signature (SQL, parameters, field paths) that two builds of the same
 * statement share. Null when the shape needs drizzle's own handling (custom mappers, joins that null a table).
 */
export interface LeanPlan {
  readonly text: string;
  readonly params: readonly ((values: Record<string, unknown>) => unknown)[];
  readonly mapRow: (row: SqlStorageValue[]) => Record<string, unknown>;
  readonly signature: string;
}

export function leanPlan(prepared: PreparedSelect<unknown, unknown>): LeanPlan | null {
  const p = prepared as unknown as PreparedInternals;
  const nullableJoin = p.joinsNotNullableMap !== undefined && Object.values(p.joinsNotNullableMap).some((notNull) => !notNull);
  if (!p.fields || p.customResultMapper || nullableJoin) return null;
  const text = p.query.sql;
  const params = paramGetters(p.query.params);
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
  return { text, params, mapRow, signature: querySignature(p.query, p.fields) };
}

/** The plan run on `client`: one `sql.exec` per call and a loop over the raw rows. */
export function bindLean<TAll, TGet>(plan: LeanPlan, client: SqlClient): PreparedSelect<TAll, TGet> {
  const { text, params, mapRow } = plan;
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

/** What `leanRun` needs of a drizzle prepared write (durable-sqlite's `SQLiteDOPreparedQuery`). */
export interface PreparedWrite {
  run(values?: Record<string, unknown>): unknown;
}

/** A prepared write's SQL and parameter bindings, free of any one database (`RawPlan`'s shape). */
export function writePlan(prepared: PreparedWrite): RawPlan {
  const { query } = prepared as unknown as PreparedInternals;
  return { text: query.sql, params: paramGetters(query.params), signature: querySignature(query) };
}

/**
 * A drizzle prepared write (an insert, update or delete without RETURNING) run without drizzle's per-call work
 * (issue 12 §8, session 11): its `run` classifies every parameter with `is()` on every call to fill the
 * placeholders. Here each parameter's binding is decided once (`paramGetters`), so a call is one `sql.exec` with the
 * same SQL and the same bound values as drizzle's `run`. Like drizzle's, the cursor is not read.
 */
export function leanRun(prepared: PreparedWrite): LeanWrite {
  return bindWrite(writePlan(prepared), (prepared as unknown as PreparedInternals).client);
}

export interface LeanWrite {
  run(values?: Record<string, unknown>): void;
}

export function bindWrite(plan: RawPlan, client: SqlClient): LeanWrite {
  const exec = bindRaw(plan, client);
  return {
    run: (values) => {
      exec(values);
    },
  };
}

/** Each built parameter as a function of the call's placeholder values (drizzle's `fillPlaceholders`, decided once). */
function paramGetters(built: readonly unknown[]): ((values: Record<string, unknown>) => unknown)[] {
  return built.map((param): ((values: Record<string, unknown>) => unknown) => {
    if (is(param, Placeholder)) return (values) => placeholderValue(values, param.name);
    if (is(param, Param) && is(param.value, Placeholder)) {
      const { encoder, value } = param;
      return (values) => encoder.mapToDriverValue(placeholderValue(values, value.name));
    }
    return () => param;
  });
}

/**
 * What two builds of one statement must share: the SQL, each parameter (a placeholder's name, or a bound value), and
 * the field paths of the rows. A statement built once per isolate (./statement-sites.ts) compares it in tests.
 */
export function querySignature(query: { sql: string; params: readonly unknown[] }, fields?: readonly { path: readonly string[] }[]): string {
  const params = query.params.map((param) => {
    if (is(param, Placeholder)) return `:${param.name}`;
    if (is(param, Param) && is(param.value, Placeholder)) return `:${param.value.name}`;
    return param instanceof ArrayBuffer || ArrayBuffer.isView(param) ? `bytes(${param.byteLength})` : `${typeof param}(${String(param)})`;
  });
  return JSON.stringify([query.sql, params, fields?.map((f) => f.path.join("."))]);
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
export function rawStatement<TRow extends Record<string, SqlStorageValue>>(db: object, query: SQL): RawStatement<TRow> {
  return rawCalls<TRow>(compiled(db, query));
}

/**
 * `rawStatement` returning each row as SQLite's value array (column order of the statement), without building an
 * object per row: for wide rows read often, decoded by position by the caller (issue 12 §8, session 8).
 */
export function rawRowsStatement(db: object, query: SQL): RawRowsStatement {
  return rawRowsCalls(compiled(db, query));
}

/** The statement's SQL rendered once, and a call that binds the placeholders and runs it. */
function compiled(db: object, query: SQL): (values?: Record<string, unknown>) => SqlStorageCursor<Record<string, SqlStorageValue>> {
  return bindRaw(rawPlan(db, query), (db as { $client: SqlClient }).$client);
}

/** A hand-written statement's SQL and parameters, rendered once (free of any one database). */
export interface RawPlan {
  readonly text: string;
  readonly params: readonly ((values: Record<string, unknown>) => unknown)[];
  readonly signature: string;
}

export function rawPlan(db: object, query: SQL): RawPlan {
  const built = (db as { dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } } }).dialect.sqlToQuery(query);
  return { text: built.sql, params: paramGetters(built.params), signature: querySignature(built) };
}

/** The raw plan run on `client`: a call binds the placeholders and returns SQLite's cursor. */
export function bindRaw(plan: RawPlan, client: SqlClient): (values?: Record<string, unknown>) => SqlStorageCursor<Record<string, SqlStorageValue>> {
  const { text, params } = plan;
  return (values = {}) => client.sql.exec(text, ...params.map((param) => param(values)));
}

/** `rawStatement`'s calls over a cursor factory (shared with the per-isolate sites). */
export function rawCalls<TRow extends Record<string, SqlStorageValue>>(exec: (values?: Record<string, unknown>) => SqlStorageCursor<Record<string, SqlStorageValue>>): RawStatement<TRow> {
  const run = exec as (values?: Record<string, unknown>) => SqlStorageCursor<TRow>;
  return {
    all: (values) => run(values).toArray(),
    get: (values) => {
      for (const row of run(values)) return row;
      return undefined;
    },
  };
}

/** `rawRowsStatement`'s call over a cursor factory. */
export function rawRowsCalls(exec: (values?: Record<string, unknown>) => SqlStorageCursor<Record<string, SqlStorageValue>>): RawRowsStatement {
  return { all: (values) => Array.from(exec(values).raw()) };
}

export interface RawStatement<TRow> {
  all(values?: Record<string, unknown>): TRow[];
  get(values?: Record<string, unknown>): TRow | undefined;
}

export interface RawRowsStatement {
  all(values?: Record<string, unknown>): SqlStorageValue[][];
}
