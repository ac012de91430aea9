import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { planOrReuse, type ActionEnvelope, buildActionEnvelope, type ToolResultEnvelope } from "../../../core/tools/tool-envelopes";
import { targetRefsFromArgs } from "../../../core/ids/target-refs";
import * as schema from "../../../db/agent-schema";
import type { ToolDefinition } from "../../../tools/registry/types";
import { nowIso } from "../../shared/sqlite";
import type { AgentDb } from "../types";

/** A step's planned actions. */
const STEP = (db: AgentDb) => {
  const a = schema.actions;
  return db.select().from(a).where(and(eq(a.runKey, sql.placeholder("runKey")), eq(a.step, sql.placeholder("step")))).orderBy(asc(a.callIndex)).prepare();
};

export type ActionStatus = "planned" | "executing" | "awaiting_approval" | "completed" | "failed";

export interface PlannedAction {
  operationId: string;
  runKey: string;
  step: number;
  callIndex: number;
  toolCallId: string;
  toolName: string;
  envelope: ActionEnvelope;
  status: ActionStatus;
  result: ToolResultEnvelope | null;
  /** When the plan's status last changed (ISO): how long a call has been out. */
  updatedAt: string;
}

export interface PlanRequest {
  runKey: string;
  step: number;
  callIndex: number;
  toolCallId: string;
  tool: Pick<ToolDefinition, "name" | "version" | "riskLevel">;
  args: Record<string, unknown>;
  allowedCategoryIds: readonly string[];
}

export type PlanResult = { ok: true; action: PlannedAction; reused: boolean } | { ok: false; code: "action_plan_mismatch"; message: string };

/**
 * The run's planned tool actions. A plan is persisted (with its actionStableId and operationId)
 * before anything executes; a replay of the same step finds and reuses it, never regenerates it.
 */
export class ActionStore {
  /** Read at every step and at every run's end, built once (issue 12 §8). */
  private readonly stepQuery;

  constructor(private readonly db: AgentDb) {
    this.stepQuery = STEP(db);
  }

  forStep(runKey: string, step: number): PlannedAction[] {
    return this.stepQuery.all({ runKey, step }).map(toPlanned);
  }

  get(operationId: string): PlannedAction | null {
    const row = this.db.select().from(schema.actions).where(eq(schema.actions.operationId, operationId)).get();
    return row ? toPlanned(row) : null;
  }

  /** Plans a call, or returns the plan an earlier attempt persisted for the same position or intent. */
  plan(request: PlanRequest): PlanResult {
    const atPosition = this.forStep(request.runKey, request.step).find((action) => action.callIndex === request.callIndex);
    const outcome = planOrReuse(atPosition?.envelope, () =>
      buildActionEnvelope({
        tool: request.tool,
        args: request.args as never,
        runKey: request.runKey,
        allowedCategoryIds: request.allowedCategoryIds,
        targetRefs: targetRefsFromArgs(request.args),
      }),
    );
    if (outcome.status === "corrupt") return { ok: false, code: "action_plan_mismatch", message: `the persisted plan's ${outcome.field} does not recompute` };
    if (outcome.status === "reused") return { ok: true, action: atPosition!, reused: true };
    // The same intent twice in one run is one operation (one operationId): reuse its row.
    const sameIntent = this.get(outcome.action.operationId);
    if (sameIntent) return { ok: true, action: sameIntent, reused: true };
    const now = nowIso();
    const envelope = outcome.action;
    this.db
      .insert(schema.actions)
      .values({
        operationId: envelope.operationId,
        runKey: request.runKey,
        step: request.step,
        callIndex: request.callIndex,
        toolCallId: request.toolCallId,
        toolName: envelope.toolName,
        toolVersion: String(envelope.toolVersion),
        args: envelope.args as Record<string, unknown>,
        actionStableId: envelope.actionStableId,
        riskLevel: envelope.riskLevel,
        previewOnly: envelope.previewOnly,
        envelope: envelope as unknown as Record<string, unknown>,
        status: "planned",
        createdAt: now,
        updatedAt: now,
      })
      .run();
    return { ok: true, action: this.get(envelope.operationId)!, reused: false };
  }

  setStatus(operationId: string, status: ActionStatus): void {
    this.db.update(schema.actions).set({ status, updatedAt: nowIso() }).where(eq(schema.actions.operationId, operationId)).run();
  }

  /** Records the result once; a second report of the same operation changes nothing. */
  complete(operationId: string, result: ToolResultEnvelope): { action: PlannedAction; changed: boolean } {
    const current = this.get(operationId);
    if (!current) throw new Error(`unknown operation ${operationId}`);
    if (current.status === "completed" || current.status === "failed") return { action: current, changed: false };
    this.db
      .update(schema.actions)
      .set({ status: result.ok ? "completed" : "failed", result: result as unknown as Record<string, unknown>, updatedAt: nowIso() })
      .where(eq(schema.actions.operationId, operationId))
      .run();
    return { action: this.get(operationId)!, changed: true };
  }

  /** Whether any call of the run is still out (a saga or its decision not yet reported back). */
  outstandingFor(runKey: string): boolean {
    return this.db
      .select({ operationId: schema.actions.operationId })
      .from(schema.actions)
      .where(and(eq(schema.actions.runKey, runKey), inArray(schema.actions.status, ["executing", "awaiting_approval"])))
      .limit(1)
      .all().length > 0;
  }

  /** Sagas started but not yet reported back (what the watchdog re-drives). */
  inFlight(): PlannedAction[] {
    // awaiting_approval: the saga is out too, waiting for its decision (helper "approvals").
    return this.db.select().from(schema.actions).where(inArray(schema.actions.status, ["executing", "awaiting_approval"])).all().map(toPlanned);
  }
}

function toPlanned(row: typeof schema.actions.$inferSelect): PlannedAction {
  return {
    operationId: row.operationId,
    runKey: row.runKey,
    step: row.step,
    callIndex: row.callIndex,
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    envelope: row.envelope as unknown as ActionEnvelope,
    status: row.status as ActionStatus,
    result: (row.result as unknown as ToolResultEnvelope | null) ?? null,
    updatedAt: row.updatedAt,
  };
}
