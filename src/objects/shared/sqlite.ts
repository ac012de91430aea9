import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";

export type Migrations = Parameters<typeof migrate>[1];

/** Opens a DO's SQLite through drizzle and applies the checked-in migrations before any request runs. */
export function openDatabase<TSchema extends Record<string, unknown>>(
  ctx: DurableObjectState,
  schema: TSchema,
  migrations: Migrations,
  afterMigrate: () => void | Promise<void> = () => undefined,
): DrizzleSqliteDODatabase<TSchema> {
  const db = drizzle(ctx.storage, { schema });
  void ctx.blockConcurrencyWhile(async () => {
    await migrate(db, migrations);
    await afterMigrate();
  });
  return db;
}

export const nowIso = (): string => new Date().toISOString();
