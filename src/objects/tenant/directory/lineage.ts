import { and, eq, inArray } from "drizzle-orm";
import * as schema from "../../../db/tenant-schema";
import type { DelegationContext, RunGovernance, SpawnDecisionRecord } from "../../../schema/contracts";
import type { TenantMetrics } from "../channels";
import type { Audit, TenantDb } from "../types";

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

/** What spawn admission needs from the tenant, in one round trip: live children, brakes, time zone, budgets. */
export function delegationContextFor(db: TenantDb, parentId: string, governance: RunGovernance): DelegationContext {
  return { liveChildIds: liveChildIds(db, parentId), brakes: governance.brakes, timeZone: governance.timeZone, policy: { budgets: governance.policy.budgets } };
}

/** Every spawn decision is a policy decision: audited (`agent.spawned` / `agent.spawn_denied`) and counted. */
export function recordSpawnDecision(deps: { audit: Audit; metrics: TenantMetrics }, decision: SpawnDecisionRecord): void {
  deps.audit(`agent:${decision.parentId}`, decision.outcome === "admitted" ? "agent.spawned" : "agent.spawn_denied", decision.childId ?? decision.parentId, {
    operationId: decision.operationId,
    ...(decision.reason ? { reason: decision.reason } : {}),
  });
  deps.metrics.increment("vigil_spawns_total", { outcome: decision.outcome });
}
