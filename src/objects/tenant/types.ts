import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type * as schema from "../../db/tenant-schema";

export type TenantDb = DrizzleSqliteDODatabase<typeof schema>;
