import { and, eq, inArray } from "drizzle-orm";
import { approvalDecisionId, approvalFacts, approvalVerdict, decisionWaitMs, severityForRisk, tickAt, timeoutPolicyFor } from "../../../core/governance/approval-facts";
import { config } from "../../../config";
import { onDecisionTick, openDecision, resolveDecision, type DecisionTimeoutPolicy, type ToolApprovalDecision } from "../../../core/governance/decision";
import type { ControlMode } from "../../../core/governance/escalation";
import { targetRefsFromArgs } from "../../../core/ids/target-refs";
import { argumentFields } from "../../../core/tools/argument-fields";
import * as schema from "../../../db/tenant-schema";
import { nowIso } from "../../shared/sqlite";
import type { ApprovalAnswer, ApprovalRequest, ApprovalState } from "../../../schema/contracts";
import { writeAudit } from "../governance";
import type { DecisionRecord, ResolveBody, ResolveOutcome } from "./decisions";
import { answeredBy } from "./answerer";
import type { TrustStore } from "./trust-store";
import type { TenantDb } from "../types";

/** Cross-object contracts (the agent's tool runner asks before a mutating call's saga; never carries trust). */
export type { ApprovalAnswer, ApprovalRequest, ApprovalState } from "../../../schema/contracts";

export interface ToolApprovalDeps {
  db: TenantDb;
  trust: TrustStore;
  tickMs(): number;
  /** The tenant policy's `decisionTimeouts` overrides (empty when the policy sets none). */
  timeoutOverrides(): Partial<Record<ControlMode, DecisionTimeoutPolicy>>;
  /** Validates (and normalises) modified args against the tool's input schema. */
  validateArgs(toolName: string, args: Record<string, unknown>): { ok: true; args: Record<string, unknown> } | { ok: false; message: string };
}

/**
 * `decision/tool_approval` (seed 002): whether a mutating call needs a person (control mode × facts ×
 * trust × the thread's alwaysApprove grants), the decision record, its resolution and its timeout policy.
 */
export class ToolApprovals {
  constructor(private readonly deps: ToolApprovalDeps) {}

  /** Evaluates the gate and opens (once, by operationId) the decision; a replayed call gets the same answer. */
  request(request: ApprovalRequest): ApprovalAnswer {
    const { db } = this.deps;
    const id = approvalDecisionId(request.operationId);
    if (db.select({ id: schema.decisions.id }).from(schema.decisions).where(eq(schema.decisions.id, id)).get()) return { required: true, decisionId: id };
    const nowMs = Date.now();
    const tickMs = this.deps.tickMs();
    const tick = tickAt(nowMs, tickMs);
    const granted = db
      .select({ toolName: schema.approvalGrants.toolName })
      .from(schema.approvalGrants)
      .where(and(eq(schema.approvalGrants.agentId, request.agentId), eq(schema.approvalGrants.threadId, request.threadId)))
      .all()
      .map((row) => row.toolName);
    const facts = approvalFacts({ riskLevel: request.riskLevel, targetCategoryIds: this.targetCategories(request.args), confidence: request.confidence, trustScore: this.deps.trust.score(request.agentId, tick) });
    const verdict = approvalVerdict(request.controlMode, { toolName: request.toolName, sideEffectKind: request.sideEffectKind, facts, sessionAlwaysApproved: granted, untrustedInput: request.inputTrust === "untrusted_external" });
    if (!verdict.escalate) {
      // Only a grant is worth an audit row: ordinary auto-approvals would flood the log with every write.
      if (verdict.reason === "session_always_approved") {
        writeAudit(db, "system", "approval.skipped", request.operationId, { agentId: request.agentId, toolName: request.toolName, threadId: request.threadId, reason: verdict.reason });
      }
      return { required: false, reason: verdict.reason };
    }
    const policy = timeoutPolicyFor(request.controlMode, this.deps.timeoutOverrides());
    const decision = openDecision(
      { id, agentId: request.agentId, type: "decision/tool_approval", toolName: request.toolName, toolArgs: request.args, severity: severityForRisk(request.riskLevel), confidence: facts.confidence, blastRadius: facts.blastRadius, requiresRationale: false },
      policy,
      tick,
    );
    const waitMs = decisionWaitMs(policy, tickMs);
    const argsPreview = preview(request.args);
    const payload: Record<string, unknown> = {
      kind: "tool_approval",
      toolName: request.toolName,
      riskLevel: request.riskLevel,
      argsPreview,
      // Labelled for a person: a widget token cannot read the tool registry to name the fields itself.
      argsFields: argumentFields(argsPreview),
      severity: decision.severity,
      confidence: Number.isFinite(facts.confidence) ? facts.confidence : null,
      blastRadius: facts.blastRadius,
      affectsMultipleWorkstreams: facts.affectsMultipleWorkstreams,
      recommendation: "approve",
      ...(request.inputTrust ? { inputTrust: request.inputTrust } : {}),
      escalation: { reason: verdict.reason, rule: verdict.matchedRule?.description ?? null, entry: "matchedEntry" in verdict ? verdict.matchedEntry : null },
      controlMode: request.controlMode,
      timeoutPolicy: policy,
      tickMs,
      dueByTick: decision.dueByTick,
      dueAtMs: waitMs === null ? null : nowMs + waitMs,
      extensionsUsed: 0,
      timedOut: false,
      threadId: request.threadId,
    };
    db.insert(schema.decisions).values({ id, agentId: request.agentId, runKey: request.runKey, operationId: request.operationId, type: "decision/tool_approval", status: "pending", payload, createdAt: nowIso() }).onConflictDoNothing().run();
    writeAudit(db, "system", "decision.requested", id, { agentId: request.agentId, kind: "tool_approval", toolName: request.toolName, operationId: request.operationId, reason: verdict.reason, controlMode: request.controlMode, ...(request.inputTrust ? { inputTrust: request.inputTrust } : {}) });
    return { required: true, decisionId: id };
  }

  /** A person answers (inside the caller's transaction): validate, record, trust, grant, audit. */
  resolve(tx: TenantDb, row: DecisionRecord, body: ResolveBody, actor: string): ResolveOutcome {
    if (body.answerText !== undefined) return invalid("answerText", "answerText is only for ask_user questions");
    const checked = resolveDecision(toCore(row), body);
    if (!checked.ok) return checked.code === "decision_not_pending" ? { ok: false, code: "decision_not_pending", message: `decision is ${checked.status}` } : invalid(checked.field, checked.message);
    let modifiedArgs: Record<string, unknown> | undefined;
    if (body.resolutionType === "modify") {
      const valid = this.deps.validateArgs(String(row.payload.toolName), body.modifiedArgs ?? {});
      if (!valid.ok) return invalid("modifiedArgs", valid.message);
      modifiedArgs = valid.args;
    }
    const resolvedAt = nowIso();
    const stored: Record<string, unknown> = { ...body, ...(modifiedArgs ? { modifiedArgs } : {}), resolvedBy: "human", actor, trustOutcome: checked.trustOutcome };
    const updated = tx.update(schema.decisions).set({ status: "resolved", resolution: stored, resolvedAt }).where(and(eq(schema.decisions.id, row.id), eq(schema.decisions.status, "pending"))).returning().get();
    if (!updated) return { ok: false, code: "decision_not_pending", message: "decision is no longer pending" };
    const toolName = String(row.payload.toolName);
    writeAudit(tx, actor, "decision.resolved", row.id, { agentId: row.agentId, kind: "tool_approval", toolName, resolutionType: body.resolutionType, modified: modifiedArgs !== undefined, alwaysApprove: body.alwaysApprove === true, rationale: body.rationale ?? null, ...answeredBy(actor) });
    if (checked.trustOutcome) {
      const change = this.deps.trust.apply(row.agentId, checked.trustOutcome, tickAt(Date.now(), this.deps.tickMs()), tx);
      writeAudit(tx, "system", "trust.updated", row.agentId, { decisionId: row.id, ...change });
    }
    if (body.resolutionType === "approve" && body.alwaysApprove) {
      const threadId = String(row.payload.threadId ?? "");
      tx.insert(schema.approvalGrants).values({ agentId: row.agentId, threadId, toolName, decisionId: row.id, createdAt: resolvedAt }).onConflictDoNothing().run();
      writeAudit(tx, actor, "approval.granted", row.id, { agentId: row.agentId, threadId, toolName });
    }
    return { ok: true, decision: updated, saga: { operationId: row.operationId ?? "" } };
  }

  /** The saga's view of its decision. */
  state(decisionId: string, nowMs = Date.now()): ApprovalState {
    const row = this.row(decisionId);
    if (!row) return { state: "rejected", decisionId, code: "not_found", message: "the approval decision does not exist", resolvedBy: "system" };
    return stateOf(row, nowMs);
  }

  /**
   * The saga's wait ran out: if the decision is due, apply its timeout policy (the one stamped when it
   * opened) at its due tick, so the outcome depends on the record only, and record what happened.
   */
  timedOut(decisionId: string, nowMs = Date.now()): ApprovalState {
    const row = this.row(decisionId);
    if (!row || row.status !== "pending") return this.state(decisionId, nowMs);
    const dueAtMs = typeof row.payload.dueAtMs === "number" ? row.payload.dueAtMs : null;
    if (dueAtMs === null || nowMs < dueAtMs) return stateOf(row, nowMs);
    const policy = row.payload.timeoutPolicy as DecisionTimeoutPolicy;
    const decision = toCore(row);
    const result = onDecisionTick(decision, policy, decision.dueByTick ?? 0);
    const tickMs = typeof row.payload.tickMs === "number" ? row.payload.tickMs : this.deps.tickMs();
    return this.deps.db.transaction((tx) => {
      if (result.action === "none") return stateOf(row, nowMs);
      const audit = (action: string, detail: Record<string, unknown>) => writeAudit(tx, "system", action, row.id, { agentId: row.agentId, toolName: row.payload.toolName, ...detail });
      audit("decision.timeout", { action: result.action, path: result.path, policy, ...(result.action === "escalated" ? { from: result.from, to: result.to } : {}) });
      if (result.action === "extended" || result.action === "escalated") {
        const next = result.decision;
        const waitMs = (policy.timeoutTicks ?? 0) * tickMs;
        const payload = { ...row.payload, severity: next.severity, timedOut: next.timedOut, extensionsUsed: next.extensionsUsed, dueByTick: next.dueByTick, dueAtMs: nowMs + waitMs };
        tx.update(schema.decisions).set({ payload }).where(eq(schema.decisions.id, row.id)).run();
        return { state: "pending", waitMs } as const;
      }
      const resolvedAt = nowIso();
      if (result.action === "auto_resolved") {
        const resolution = { ...result.resolution, resolvedBy: "timeout", actor: "system", trustOutcome: result.trustOutcome, path: result.path };
        tx.update(schema.decisions).set({ status: "resolved", resolution, resolvedAt }).where(eq(schema.decisions.id, row.id)).run();
        const change = this.deps.trust.apply(row.agentId, result.trustOutcome, decision.dueByTick ?? 0, tx);
        writeAudit(tx, "system", "trust.updated", row.agentId, { decisionId: row.id, ...change });
        audit("decision.resolved", { kind: "tool_approval", resolutionType: "approve", resolvedBy: "timeout" });
      } else {
        tx.update(schema.decisions).set({ status: "cancelled", resolution: { resolvedBy: "timeout", actor: "system", path: result.path }, resolvedAt }).where(eq(schema.decisions.id, row.id)).run();
        audit("decision.cancelled", { resolvedBy: "timeout" });
      }
      return stateOf(tx.select().from(schema.decisions).where(eq(schema.decisions.id, row.id)).get()!, nowMs);
    });
  }

  /** Categories of everything the call names: category arguments directly, other entities by their journal row. */
  private targetCategories(args: Record<string, unknown>): string[] {
    const refs = targetRefsFromArgs(args);
    const direct = refs.filter((ref) => ref.type === "category").map((ref) => ref.id);
    const others = refs.filter((ref) => ref.type !== "category").map((ref) => ref.id);
    const looked = others.length
      ? this.deps.db.select({ categoryId: schema.journalEntities.categoryId }).from(schema.journalEntities).where(inArray(schema.journalEntities.id, others)).all()
      : [];
    return [...direct, ...looked.map((row) => row.categoryId).filter((id): id is string => typeof id === "string")];
  }

  private row(id: string): DecisionRecord | null {
    const row = this.deps.db.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get();
    return row && row.type === "decision/tool_approval" ? row : null;
  }
}

function stateOf(row: DecisionRecord, nowMs: number): ApprovalState {
  const resolution = row.resolution ?? {};
  const resolvedBy = String(resolution.resolvedBy ?? "human");
  if (row.status === "pending" || row.status === "suspended") {
    const dueAtMs = row.status === "pending" && typeof row.payload.dueAtMs === "number" ? row.payload.dueAtMs : null;
    return { state: "pending", waitMs: dueAtMs === null ? config.decisions.idleWaitMs : Math.max(1, dueAtMs - nowMs) };
  }
  if (row.status === "cancelled") {
    const why = resolvedBy === "agent_destroyed" ? "the agent was destroyed" : resolvedBy === "interrupted" ? "a newer message interrupted the run" : "the approval timed out";
    return { state: "rejected", decisionId: row.id, code: "cancelled", message: `${why} and the call was cancelled`, resolvedBy };
  }
  if (resolution.resolutionType === "approve" || resolution.resolutionType === "modify") {
    const modifiedArgs = resolution.resolutionType === "modify" ? (resolution.modifiedArgs as Record<string, unknown>) : null;
    return { state: "approved", decisionId: row.id, resolutionType: resolution.resolutionType, modifiedArgs, resolvedBy };
  }
  const rationale = typeof resolution.rationale === "string" && resolution.rationale ? `: ${resolution.rationale}` : "";
  return { state: "rejected", decisionId: row.id, code: "rejected", message: `a person rejected this call${rationale}`, resolvedBy };
}

/** The stored row as the core's `decision/tool_approval`. */
export function toCore(row: DecisionRecord): ToolApprovalDecision {
  const p = row.payload;
  return {
    id: row.id,
    agentId: row.agentId,
    type: "decision/tool_approval",
    status: row.status as ToolApprovalDecision["status"],
    severity: (p.severity as ToolApprovalDecision["severity"]) ?? "medium",
    confidence: typeof p.confidence === "number" ? p.confidence : Number.NaN,
    blastRadius: (p.blastRadius as ToolApprovalDecision["blastRadius"]) ?? "unknown",
    requiresRationale: false,
    dueByTick: typeof p.dueByTick === "number" ? p.dueByTick : null,
    extensionsUsed: typeof p.extensionsUsed === "number" ? p.extensionsUsed : 0,
    timedOut: p.timedOut === true,
    resolution: null,
    resolvedBy: null,
    toolName: String(p.toolName),
    toolArgs: (p.argsPreview as Record<string, unknown>) ?? {},
  };
}

/** Args as a person reviews them: long strings cut, so a decision row stays small. */
function preview(args: Record<string, unknown>): Record<string, unknown> {
  const cut = (value: unknown): unknown =>
    typeof value === "string" ? (value.length > 500 ? `${value.slice(0, 500)}…` : value) : Array.isArray(value) ? value.slice(0, 50).map(cut) : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)])) : value;
  return cut(args) as Record<string, unknown>;
}

const invalid = (field: string, message: string): ResolveOutcome => ({ ok: false, code: "validation_failed", message: `${field}: ${message}`, field });
