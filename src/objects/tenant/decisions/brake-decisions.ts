import { eq } from "drizzle-orm";
import { resolveDecision, type Resolution } from "../../../core/governance/decision";
import { H } from "../../../core/ids/hash";
import * as schema from "../../../db/tenant-schema";
import { nowIso } from "../../shared/sqlite";
import { BRAKE_DECISION_KIND, type BrakeDecisionRequest } from "../governance";
import { markResolved, optionDecisionOf, type DecisionRecord } from "./decisions";
import type { TenantDb } from "../types";

export type BrakeDecisionOutcome =
  | { ok: true; decision: DecisionRecord; brakeId: string; chosenOptionId: string | null }
  | { ok: false; code: "not_found" | "decision_not_pending"; message: string }
  | { ok: false; code: "validation_failed"; message: string; field: string };

/**
 * The `decision/option` (keep | release) a `release: decision` brake opens. It lives in the tenant's
 * decisions table beside approvals and questions, so `GET /v1/decisions` and the resolve route serve it;
 * resolving it never wakes an agent.
 */
export class BrakeDecisions {
  constructor(private readonly db: TenantDb) {}

  open(request: BrakeDecisionRequest): string {
    const id = `dec_${H(request.brakeId, "brake-decision").slice(0, 24)}`;
    this.db
      .insert(schema.decisions)
      .values({
        id,
        agentId: request.agentId,
        runKey: null,
        operationId: null,
        type: "decision/option",
        status: "pending",
        payload: { kind: BRAKE_DECISION_KIND, brakeId: request.brakeId, question: request.question, options: request.options, recommendedOptionId: null, allowFreeText: false },
        createdAt: nowIso(),
      })
      .onConflictDoNothing()
      .run();
    return id;
  }

  /** Null when `id` is not a brake decision (the caller goes on to the other decision kinds). */
  resolve(actor: string, id: string, resolution: Resolution & { answerText?: string | undefined }, visibleAgents?: readonly string[]): BrakeDecisionOutcome | null {
    return this.db.transaction((tx) => {
      const row = tx.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get();
      if (!row || row.payload.kind !== BRAKE_DECISION_KIND) return null;
      if (visibleAgents) return { ok: false, code: "not_found", message: "decision not found" };
      if (row.status !== "pending") return { ok: false, code: "decision_not_pending", message: `decision is ${row.status}` };
      const { answerText, ...body } = resolution;
      if (answerText !== undefined) return { ok: false, code: "validation_failed", field: "answerText", message: "answerText: a brake decision takes no free text" };
      const checked = resolveDecision(optionDecisionOf(row, "high"), body);
      if (!checked.ok) {
        if (checked.code === "decision_not_pending") return { ok: false, code: "decision_not_pending", message: `decision is ${checked.status}` };
        return { ok: false, code: "validation_failed", field: checked.field, message: `${checked.field}: ${checked.message}` };
      }
      const resolvedAt = nowIso();
      const stored = { ...body, resolvedBy: "human", actor };
      const updated = markResolved(tx, id, stored, resolvedAt);
      if (!updated) return { ok: false, code: "decision_not_pending", message: "decision is no longer pending" };
      const chosenOptionId = body.resolutionType === "choose_option" ? (body.chosenOptionId ?? null) : null;
      tx.insert(schema.audit)
        .values({ at: resolvedAt, actor, action: "decision.resolved", target: id, detail: { kind: BRAKE_DECISION_KIND, brakeId: row.payload.brakeId, resolutionType: body.resolutionType, chosenOptionId } })
        .run();
      return { ok: true, decision: updated, brakeId: String(row.payload.brakeId), chosenOptionId };
    });
  }
}
