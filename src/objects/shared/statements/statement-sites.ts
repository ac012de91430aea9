import type { SQL } from "drizzle-orm";
import { bindLean, bindRaw, bindWrite, leanPlan, querySignature, rawCalls, rawPlan, rawRowsCalls, writePlan, type LeanPlan, type LeanWrite, type PreparedSelect, type PreparedWrite, type RawPlan, type RawRowsStatement, type RawStatement, type SqlClient } from "./lean-query";

/**
 * Statements built once per isolate (issue 12 §7, session 11). A cold Durable Object used to build every part's
 * prepared statements through drizzle in its constructor (~4.4 ms of a ~33 ms cold wake), yet a statement's SQL,
 * placeholder positions and row decoders are the same for every object of the class. A statement SITE is declared
 * once, at module scope, with an explicit name and a build function of the database alone (so it cannot close over
 * one object's state); the first object to bind it builds through drizzle and keeps the plan, every later object
 * binds the plan to its own SQLite client without building.
 *
 * The name is the key, and it is unique: declaring a second site under a taken name throws when the module loads.
 * With `checkStatementSites(true)` (test deployments) every bind also builds afresh and throws if the signature (SQL,
 * parameters, field paths) differs from the kept plan's, so a build that depends on anything but the schema fails
 * the tests that construct the object.
 */
export interface StatementSite<TDb, T> {
  readonly name: string;
  bind(db: TDb): T;
}

const names = new Set<string>();
let checking = false;

/** Test deployments compare every bind against a fresh build (set by the objects from their env). */
export function checkStatementSites(on: boolean): void {
  checking = on;
}

export class StatementSiteMismatch extends Error {
  constructor(name: string, kept: string, fresh: string) {
    super(`statement site "${name}" built a different statement: kept ${kept}, now ${fresh}`);
    this.name = "StatementSiteMismatch";
  }
}

function declare(name: string): void {
  if (names.has(name)) throw new Error(`statement site "${name}" is declared twice: every site needs its own name`);
  names.add(name);
}

/**
 * A site of plans of kind P: `plan` builds one from a fresh build (null: the shape is left to drizzle, built per
 * object as before), `bound` runs a plan on one database.
 */
function site<TDb, T, P extends { signature: string }>(name: string, plan: (db: TDb) => P | null, bound: (plan: P, db: TDb) => T, fallback: (db: TDb) => T): StatementSite<TDb, T> {
  declare(name);
  let kept: P | null | undefined;
  return {
    name,
    bind(db) {
      if (kept === undefined) kept = plan(db);
      else if (checking && kept !== null) {
        const fresh = plan(db);
        if (fresh?.signature !== kept.signature) throw new StatementSiteMismatch(name, kept.signature, fresh?.signature ?? "a shape drizzle runs itself");
      }
      return kept === null ? fallback(db) : bound(kept, db);
    },
  };
}

/** The client drizzle's own prepared queries use: the session's (a database and its transactions share it). */
const clientOf = (db: object): SqlClient => (db as { session: { client: SqlClient } }).session.client;

/** A drizzle select run lean (`lean` in ./lean-query.ts), built once per isolate. */
export function leanSite<TDb extends object, TAll, TGet>(name: string, build: (db: TDb) => PreparedSelect<TAll, TGet>): StatementSite<TDb, PreparedSelect<TAll, TGet>> {
  return site<TDb, PreparedSelect<TAll, TGet>, LeanPlan>(
    name,
    (db) => leanPlan(build(db) as PreparedSelect<unknown, unknown>),
    (plan, db) => bindLean<TAll, TGet>(plan, clientOf(db)),
    build,
  );
}

/** A hand-written statement (`rawStatement`), rendered once per isolate. */
export function rawSite<TRow extends Record<string, SqlStorageValue>>(name: string, query: () => SQL): StatementSite<object, RawStatement<TRow>> {
  return site<object, RawStatement<TRow>, RawPlan>(
    name,
    (db) => rawPlan(db, query()),
    (plan, db) => rawCalls<TRow>(bindRaw(plan, clientOf(db))),
    () => {
      throw new Error("unreachable: a raw statement always has a plan");
    },
  );
}

/** `rawRowsStatement`, rendered once per isolate. */
export function rawRowsSite(name: string, query: () => SQL): StatementSite<object, RawRowsStatement> {
  return site<object, RawRowsStatement, RawPlan>(
    name,
    (db) => rawPlan(db, query()),
    (plan, db) => rawRowsCalls(bindRaw(plan, clientOf(db))),
    () => {
      throw new Error("unreachable: a raw statement always has a plan");
    },
  );
}

/** A drizzle prepared write run lean (`leanRun` in ./lean-query.ts), built once per isolate. */
export function writeSite<TDb extends object>(name: string, build: (db: TDb) => PreparedWrite): StatementSite<TDb, LeanWrite> {
  return site<TDb, LeanWrite, RawPlan>(
    name,
    (db) => writePlan(build(db)),
    (plan, db) => bindWrite(plan, clientOf(db)),
    () => {
      throw new Error("unreachable: a prepared write always has a plan");
    },
  );
}

/** drizzle-orm/durable-sqlite's `SQLiteDOPreparedQuery`, as far as a rebind needs it. */
interface DOPrepared {
  constructor: new (client: SqlClient, query: { sql: string; params: unknown[] }, logger: unknown, fields: unknown, executeMethod: unknown, isResponseInArrayMode: unknown, customResultMapper: unknown) => DOPrepared;
  query: { sql: string; params: unknown[] };
  fields?: { path: string[]; field: unknown }[];
  executeMethod: unknown;
  _isResponseInArrayMode: unknown;
  customResultMapper?: unknown;
  joinsNotNullableMap?: Record<string, boolean>;
}

interface PreparedPlan {
  readonly make: DOPrepared["constructor"];
  readonly query: DOPrepared["query"];
  readonly fields: DOPrepared["fields"];
  readonly executeMethod: unknown;
  readonly isResponseInArrayMode: unknown;
  readonly joinsNotNullableMap: DOPrepared["joinsNotNullableMap"];
  readonly signature: string;
}

/**
 * A drizzle prepared statement (an insert, update or delete, with or without `returning`), built once per isolate:
 * later objects get drizzle's own prepared query class constructed over the kept query, fields and join map with
 * their own client, so `run`/`all`/`get` are drizzle's code (placeholders filled, returned rows mapped) as a fresh
 * build would run them. Only the build is skipped. A custom result mapper (relational queries) keeps drizzle's build.
 */
export function preparedSite<TDb extends object, T>(name: string, build: (db: TDb) => T): StatementSite<TDb, T> {
  return site<TDb, T, PreparedPlan>(
    name,
    (db) => {
      const built = build(db) as unknown as DOPrepared;
      if (built.customResultMapper || !built.query || typeof built.constructor !== "function") return null;
      return {
        make: built.constructor,
        query: built.query,
        fields: built.fields,
        executeMethod: built.executeMethod,
        isResponseInArrayMode: built._isResponseInArrayMode,
        joinsNotNullableMap: built.joinsNotNullableMap,
        signature: querySignature(built.query, built.fields) + String(built.executeMethod),
      };
    },
    (plan, db) => {
      const session = (db as { session: { client: SqlClient; logger: unknown } }).session;
      const prepared = new plan.make(session.client, plan.query, session.logger, plan.fields, plan.executeMethod, plan.isResponseInArrayMode, undefined);
      if (plan.joinsNotNullableMap !== undefined) prepared.joinsNotNullableMap = plan.joinsNotNullableMap;
      return prepared as unknown as T;
    },
    build,
  );
}
