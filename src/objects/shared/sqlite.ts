import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type { SQL } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";

export type Migrations = Parameters<typeof migrate>[1];

/** Opens a DO's SQLite through drizzle and applies the checked-in migrations before any request runs. */
export function openDatabase<TSchema extends Record<string, unknown>>(
  ctx: DurableObjectState,
  schema: TSchema,
  migrations: Migrations,
  afterMigrate: () => void | Promise<void> = () => undefined,
): DrizzleSqliteDODatabase<TSchema> {
  // The object's own storage, unwrapped: tests that count statements meter `ctx.storage.sql` themselves.
  const db = drizzle(ctx.storage, { schema });
  void ctx.blockConcurrencyWhile(async () => {
    if (migrationsPending(migratedThrough(ctx.storage), migrations)) {
      if (migrationsPending(lastAppliedMigration(ctx.storage), migrations)) await migrate(db, migrations);
      ctx.storage.kv.put(MIGRATED_THROUGH, newestMigration(migrations));
    }
    await afterMigrate();
  });
  return db;
}

/**
 * Where an object notes the newest migration it has applied. The runtime keeps its key-value statements prepared
 * from the object's start, so a cold start reads this instead of preparing and running one more statement of its
 * own (issue 12 §7, session 16). Only a migrated database writes it; an absent note (a new object, or after
 * `deleteAll`) falls back to the ledger's read.
 */
export const MIGRATED_THROUGH = "vigil:migrated-through";

/** The note `openDatabase` keeps, or null when there is none. */
export function migratedThrough(storage: DurableObjectStorage): number | null {
  const noted = storage.kv.get<unknown>(MIGRATED_THROUGH);
  return typeof noted === "number" ? noted : null;
}

const newestMigration = (migrations: Migrations): number => Math.max(...migrations.journal.entries.map((entry) => entry.when));

/**
 * `created_at` of the newest applied migration (drizzle stores each entry's journal `when` there), or null when
 * none is recorded yet. One read instead of drizzle's per-start transaction (CREATE TABLE IF NOT EXISTS, the same
 * read, and every migration file split): a cold Durable Object start is on a fan-out's path (issue 12 §7).
 */
export function lastAppliedMigration(storage: DurableObjectStorage): number | null {
  try {
    const row = storage.sql.exec<{ at: number | string | null }>('SELECT max(created_at) AS at FROM "__drizzle_migrations"').toArray()[0];
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  } catch {
    return null; // no migrations table yet: a new object
  }
}

/**
 * Whether drizzle's migrator would apply anything: it applies each journal entry whose `when` is after the newest
 * applied `created_at` (all of them when none is recorded), so the same comparison decides it here.
 */
export function migrationsPending(lastApplied: number | null, migrations: Migrations): boolean {
  if (lastApplied === null || !Number.isFinite(lastApplied)) return true;
  return migrations.journal.entries.some((entry) => lastApplied < entry.when);
}

export const nowIso = (): string => new Date().toISOString();

/** A drizzle SQLite database of any schema (an agent's or a tenant's). */
export type SqlDatabase = BaseSQLiteDatabase<"sync", unknown, Record<string, unknown>>;

/** Named values of a hand-written statement. */
export type SqlValues = Record<string, unknown>;

/**
 * A hand-written statement (a CTE, an upsert with a guard, a compound select) as a function of its values, run through
 * drizzle's public `all` / `get` / `run`: rows come back as SQLite returns them (column aliases as keys, nothing decoded).
 */
export function handWritten<TRow>(build: (values: SqlValues) => SQL) {
  return (db: SqlDatabase) => ({
    all: (values: SqlValues = {}): TRow[] => db.all<TRow>(build(values)),
    get: (values: SqlValues = {}): TRow | undefined => db.get<TRow | undefined>(build(values)),
    run: (values: SqlValues = {}): void => void db.run(build(values)),
  });
}
