import { and, eq, inArray } from "drizzle-orm";
import * as schema from "../../db/tenant-schema";
import type { TenantDb } from "./types";

/** Lifecycles in which a child can still run and so counts against its parent's concurrency cap. */
const LIVE = ["created", "active"];

/**
 * The tenant's view of delegation lineage: the directory's `parentId` (set from the child's
 * `config.lineage` on every sync) answers which children of a parent are still live.
 */
export function liveChildIds(db: TenantDb, parentId: string): string[] {
  return db
    .select({ id: schema.agentDirectory.id })
    .from(schema.agentDirectory)
    .where(and(eq(schema.agentDirectory.parentId, parentId), inArray(schema.agentDirectory.lifecycle, LIVE)))
    .all()
    .map((row) => row.id)
    .sort();
}
