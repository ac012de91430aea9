import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type * as schema from "../../db/agent-schema";

export type AgentDb = DrizzleSqliteDODatabase<typeof schema>;
