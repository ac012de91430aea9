import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";

export type Migrations = Parameters<typeof migrate>[1];

/**
 * Counts the rows SQLite reads for the statements run while it is started (a test and bench seam: "counted,
 * not guessed"). A cursor's `rowsRead` grows while it is consumed, so cursors are summed when the count is read.
 */
export class RowMeter {
  private cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] | null = null;

  start(): void {
    this.cursors = [];
  }

  /** Rows read since `start()`; stops counting. */
  stop(): number {
    const total = (this.cursors ?? []).reduce((sum, cursor) => sum + cursor.rowsRead, 0);
    this.cursors = null;
    return total;
  }

  track<T extends Record<string, SqlStorageValue>>(cursor: SqlStorageCursor<T>): SqlStorageCursor<T> {
    this.cursors?.push(cursor as unknown as SqlStorageCursor<Record<string, SqlStorageValue>>);
    return cursor;
  }
}

/** Opens a DO's SQLite through drizzle and applies the checked-in migrations before any request runs. */
export function openDatabase<TSchema extends Record<string, unknown>>(
  ctx: DurableObjectState,
  schema: TSchema,
  migrations: Migrations,
  afterMigrate: () => void | Promise<void> = () => undefined,
  meter?: RowMeter,
): DrizzleSqliteDODatabase<TSchema> {
  // drizzle uses only `sql.exec` and `transactionSync` of the storage it is given.
  const client = meter
    ? ({
        sql: { exec: (query: string, ...params: unknown[]) => meter.track(ctx.storage.sql.exec(query, ...params)) },
        transactionSync: <T>(fn: () => T): T => ctx.storage.transactionSync(fn),
      } as unknown as DurableObjectStorage)
    : ctx.storage;
  const db = drizzle(client, { schema });
  void ctx.blockConcurrencyWhile(async () => {
    await migrate(db, migrations);
    await afterMigrate();
  });
  return db;
}

export const nowIso = (): string => new Date().toISOString();
