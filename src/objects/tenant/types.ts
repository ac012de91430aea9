import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type * as schema from "../../db/tenant-schema";

export type TenantDb = DrizzleSqliteDODatabase<typeof schema>;

/** Appends one row to the tenant's audit log. */
export type Audit = (actor: string, action: string, target: string | null, detail: Record<string, unknown>) => void;
