import { and, eq, inArray } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { OnComplete } from "../../../core/governance/spawn-admission";
import { nowIso } from "../../shared/sqlite";
import type { AgentDb } from "../types";

/** `running`: the delegated run is outstanding; `completed` / `failed`: the child reported back. */
export type ChildStatus = "running" | "completed" | "failed";

export interface ChildRecord {
  operationId: string;
  childId: string;
  runKey: string;
  childRunKey: string;
  status: ChildStatus;
  onComplete: OnComplete;
  tokenBudget: number;
  spawnDay: string;
  request: Record<string, unknown>;
  result: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The parent's side of its lineage: one row per admitted spawn, written before the child exists
 * (so a replayed operation finds its decision instead of admitting twice), updated when the child
 * reports back.
 */
export class ChildrenStore {
  constructor(private readonly db: AgentDb) {}

  byOperation(operationId: string): ChildRecord | null {
    const row = this.db.select().from(schema.agentChildren).where(eq(schema.agentChildren.operationId, operationId)).get();
    return row ? toRecord(row) : null;
  }

  byChild(childId: string): ChildRecord | null {
    const row = this.db.select().from(schema.agentChildren).where(eq(schema.agentChildren.childId, childId)).get();
    return row ? toRecord(row) : null;
  }

  /** Children spawned by one run, oldest first (the run view's lineage). */
  ofRun(runKey: string): ChildRecord[] {
    return this.db.select().from(schema.agentChildren).where(eq(schema.agentChildren.runKey, runKey)).orderBy(schema.agentChildren.createdAt).all().map(toRecord);
  }

  /** Children whose delegated run is still outstanding. */
  running(): ChildRecord[] {
    return this.db.select().from(schema.agentChildren).where(eq(schema.agentChildren.status, "running")).all().map(toRecord);
  }

  /** Tokens already handed to children spawned on `day` (the budget day they were drawn from). */
  reservedOn(day: string): number {
    return this.db
      .select({ tokenBudget: schema.agentChildren.tokenBudget })
      .from(schema.agentChildren)
      .where(eq(schema.agentChildren.spawnDay, day))
      .all()
      .reduce((sum, row) => sum + row.tokenBudget, 0);
  }

  admit(record: Omit<ChildRecord, "status" | "result" | "createdAt" | "updatedAt">): ChildRecord {
    const now = nowIso();
    this.db
      .insert(schema.agentChildren)
      .values({ ...record, status: "running", result: null, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .run();
    return this.byOperation(record.operationId)!;
  }

  /** Records the child's report once; a repeated report leaves the first one in place. */
  recordResult(childId: string, status: Exclude<ChildStatus, "running">, result: Record<string, unknown>): ChildRecord | null {
    this.db
      .update(schema.agentChildren)
      .set({ status, result, updatedAt: nowIso() })
      .where(and(eq(schema.agentChildren.childId, childId), inArray(schema.agentChildren.status, ["running"])))
      .run();
    return this.byChild(childId);
  }
}

function toRecord(row: typeof schema.agentChildren.$inferSelect): ChildRecord {
  return { ...row, status: row.status as ChildStatus, onComplete: row.onComplete as OnComplete, result: row.result ?? null };
}
