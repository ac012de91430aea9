import { eq } from "drizzle-orm";
import type { ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import { appliedOperations } from "../../../db/tenant-schema";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

/**
 * Saga phase 1's memory (seed 000 §4.6): one row per operationId holding the envelope the operation
 * answered. A mutating tool writes it in the transaction of its effect, so "applied" and "recorded"
 * are one fact; a replay answers the stored envelope and never applies twice.
 */
export const AppliedOperations = {
  get(db: TenantDb, operationId: string): { toolName: string; envelope: ToolResultEnvelope } | null {
    const row = db.select().from(appliedOperations).where(eq(appliedOperations.operationId, operationId)).get();
    return row ? { toolName: row.toolName, envelope: row.result as unknown as ToolResultEnvelope } : null;
  },

  record(db: TenantDb, entry: { operationId: string; agentId: string; toolName: string; envelope: ToolResultEnvelope }): void {
    db.insert(appliedOperations)
      .values({ operationId: entry.operationId, agentId: entry.agentId, toolName: entry.toolName, result: entry.envelope as unknown as Record<string, unknown>, appliedAt: nowIso() })
      // The first recorded outcome of an operation wins.
      .onConflictDoNothing()
      .run();
  },
};
