import { and, desc, eq, inArray, lt, or } from "drizzle-orm";
import { resolveDecision, type DecisionOption, type OptionDecision, type Resolution } from "../../core/decision";
import { H } from "../../core/hash";
import * as schema from "../../db/tenant-schema";
import { runKeys, threadIds } from "../../core/run-keys";
import type { WakeJob } from "../../schema/wake";
import { nowIso } from "../sqlite";
import type { TenantDb } from "./types";

export interface QuestionRequest {
  agentId: string;
  operationId: string;
  runKey: string;
  question: string;
  options: unknown[];
  recommendedOptionId?: string;
  allowFreeText: boolean;
  /** The thread the asking run answers in; the answer's wake continues there (absent = the run's autonomous thread). */
  threadId?: string | undefined;
}

export interface DecisionRecord {
  id: string;
  agentId: string;
  runKey: string | null;
  operationId: string | null;
  type: string;
  status: string;
  payload: Record<string, unknown>;
  resolution: Record<string, unknown> | null;
  createdAt: string;
  resolvedAt: string | null;
}

/** Seed 002 decisions, tenant-wide. An ask_user question is a `decision/option` keyed by its operationId. */
export class Decisions {
  constructor(private readonly db: TenantDb) {}

  /** Opens (once) the decision for an ask_user call; a replayed call returns the same decision. */
  openQuestion(request: QuestionRequest): string {
    const id = `dec_${H(request.operationId, "decision").slice(0, 24)}`;
    this.db
      .insert(schema.decisions)
      .values({
        id,
        agentId: request.agentId,
        runKey: request.runKey,
        operationId: request.operationId,
        type: "decision/option",
        status: "pending",
        payload: {
          kind: "ask_user",
          question: request.question,
          options: request.options,
          recommendedOptionId: request.recommendedOptionId ?? null,
          allowFreeText: request.allowFreeText,
          ...(request.threadId ? { threadId: request.threadId } : {}),
        },
        createdAt: nowIso(),
      })
      .onConflictDoNothing()
      .run();
    return id;
  }

  list(limit: number, status?: string): DecisionRecord[] {
    return this.db
      .select()
      .from(schema.decisions)
      .where(status ? eq(schema.decisions.status, status) : undefined)
      .orderBy(desc(schema.decisions.createdAt))
      .limit(limit)
      .all();
  }

  /** Newest first (createdAt, id), optionally by status and restricted to some agents (widget tokens). */
  page(query: { limit: number; status?: string | undefined; before?: { c: string; i: string } | undefined; agentIds?: readonly string[] | undefined }): { data: DecisionRecord[]; last: DecisionRecord | null } {
    const d = schema.decisions;
    const conditions = [];
    if (query.status) conditions.push(eq(d.status, query.status));
    if (query.agentIds) conditions.push(inArray(d.agentId, [...query.agentIds]));
    if (query.before) conditions.push(or(lt(d.createdAt, query.before.c), and(eq(d.createdAt, query.before.c), lt(d.id, query.before.i)))!);
    const rows = this.db
      .select()
      .from(d)
      .where(conditions.length ? and(...conditions) : undefined)
      .orderBy(desc(d.createdAt), desc(d.id))
      .limit(query.limit + 1)
      .all();
    const data = rows.slice(0, query.limit);
    return { data, last: rows.length > query.limit ? data[data.length - 1]! : null };
  }

  get(id: string): DecisionRecord | null {
    return this.db.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get() ?? null;
  }

  /**
   * A person answers an ask_user decision: validate with the core, then (one transaction) mark the row
   * resolved and audit `decision.resolved`. Returns the wake that carries the answer to the asking agent.
   */
  resolveQuestion(id: string, body: ResolveBody, actor: string, visibleAgents?: readonly string[]): ResolveOutcome {
    return this.db.transaction((tx) => {
      const row = tx.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get();
      if (!row || (visibleAgents && !visibleAgents.includes(row.agentId))) return { ok: false, code: "not_found", message: "decision not found" };
      if (row.type !== "decision/option" || row.payload.kind !== "ask_user") return { ok: false, code: "not_found", message: "decision not found" };
      const question = questionOf(row);
      const { answerText, ...resolution } = body;
      if (row.status !== "pending") {
        // The answer travels again: if the first resolve's wake was lost, a retry delivers it (its runKey is fixed).
        const resent = row.status === "resolved" && row.resolution ? answerOf(row, question.text, row.resolution) : undefined;
        return { ok: false, code: "decision_not_pending", message: `decision is ${row.status}`, ...(resent ? { answer: resent } : {}) };
      }
      if (answerText !== undefined) {
        if (!question.allowFreeText) return invalid("answerText", "this question does not accept a free-text answer");
        if (resolution.resolutionType !== "choose_option") return invalid("answerText", "answerText is only allowed with choose_option");
      }
      // A free-text answer is a choose_option without an option: the core requires an option id, so it is checked against
      // the decision with the answer standing in as an ad-hoc option (never persisted as one).
      const freeText = answerText !== undefined && resolution.chosenOptionId === undefined;
      const decision = freeText ? { ...question.decision, options: [...question.decision.options, { id: FREE_TEXT, label: answerText, description: "" }] } : question.decision;
      const checked = resolveDecision(decision, freeText ? { ...resolution, chosenOptionId: FREE_TEXT } : resolution);
      if (!checked.ok) {
        if (checked.code === "decision_not_pending") return { ok: false, code: "decision_not_pending", message: `decision is ${checked.status}` };
        return invalid(checked.field, checked.message);
      }
      const chosen = question.decision.options.find((option) => option.id === resolution.chosenOptionId) ?? null;
      const stored: Record<string, unknown> = { ...resolution, ...(answerText !== undefined ? { answerText } : {}), resolvedBy: "human", actor, trustOutcome: checked.trustOutcome };
      const resolvedAt = nowIso();
      const updated = tx
        .update(schema.decisions)
        .set({ status: "resolved", resolution: stored, resolvedAt })
        .where(and(eq(schema.decisions.id, id), eq(schema.decisions.status, "pending")))
        .returning()
        .get();
      if (!updated) return { ok: false, code: "decision_not_pending", message: "decision is no longer pending" };
      tx.insert(schema.audit)
        .values({ at: resolvedAt, actor, action: "decision.resolved", target: id, detail: { agentId: row.agentId, resolutionType: resolution.resolutionType, chosenOptionId: chosen?.id ?? null, freeText: answerText !== undefined } })
        .run();
      return {
        ok: true,
        decision: updated,
        answer: answerOf(row, question.text, stored),
      };
    });
  }
}

const FREE_TEXT = "\u0000free_text";

/** `POST /v1/decisions/:id/resolve`: seed 002 `Resolution` plus `answerText` (free-text answer to an ask_user question). */
export type ResolveBody = Resolution & { answerText?: string | undefined };

/** What the answer's wake carries to the asking agent. */
export interface DecisionAnswer {
  agentId: string;
  operationId: string;
  runKey: string | null;
  threadId: string | null;
  summary: string;
  data: { decisionId: string; resolutionType: string; chosenOptionId: string | null; answerText: string | null };
}

export type ResolveOutcome =
  | { ok: true; decision: DecisionRecord; answer: DecisionAnswer }
  | { ok: false; code: "not_found"; message: string }
  | { ok: false; code: "decision_not_pending"; message: string; answer?: DecisionAnswer }
  | { ok: false; code: "validation_failed"; message: string; field: string };

const invalid = (field: string, message: string): ResolveOutcome => ({ ok: false, code: "validation_failed", message: `${field}: ${message}`, field });

/** The wake that carries an answer to the agent that asked: fixed runKey, so re-sending it is harmless. */
export function answerWake(tenantId: string, answer: DecisionAnswer): WakeJob {
  const runKey = runKeys.toolResult(answer.agentId, answer.operationId);
  return {
    tenantId,
    agentId: answer.agentId,
    reason: "toolResult",
    runKey,
    threadId: answer.threadId ?? threadIds.autonomous(answer.agentId, answer.runKey ?? runKey),
    authority: "operator_instruction",
    input: { observation: { summary: answer.summary, data: answer.data } },
  };
}

/** What the asking agent is told, from the row and its stored resolution (first resolve and re-sends alike). */
function answerOf(row: DecisionRecord, questionText: string, resolution: Record<string, unknown>): DecisionAnswer {
  const options = Array.isArray(row.payload.options) ? (row.payload.options as Array<{ id?: unknown; label?: unknown }>) : [];
  const chosenOptionId = typeof resolution.chosenOptionId === "string" ? resolution.chosenOptionId : null;
  const chosen = options.find((option) => option.id === chosenOptionId);
  const answerText = typeof resolution.answerText === "string" ? resolution.answerText : null;
  const resolutionType = String(resolution.resolutionType);
  const answer = resolutionType === "reject" ? "rejected" : String(chosen?.label ?? chosen?.id ?? answerText ?? "");
  return {
    agentId: row.agentId,
    operationId: row.operationId ?? row.id,
    runKey: row.runKey,
    threadId: typeof row.payload.threadId === "string" ? row.payload.threadId : null,
    summary: `answer to ${questionText}: ${answer}`,
    data: { decisionId: row.id, resolutionType, chosenOptionId: chosen ? chosenOptionId : null, answerText },
  };
}

/** The stored ask_user row as the core's `decision/option`. */
function questionOf(row: DecisionRecord): { decision: OptionDecision; text: string; allowFreeText: boolean } {
  const payload = row.payload;
  const text = String(payload.question ?? "");
  const options: DecisionOption[] = (Array.isArray(payload.options) ? payload.options : []).map((raw) => {
    const option = raw as { id?: unknown; label?: unknown; description?: unknown };
    return { id: String(option.id), label: String(option.label ?? option.id), description: typeof option.description === "string" ? option.description : "" };
  });
  const decision: OptionDecision = {
    id: row.id,
    agentId: row.agentId,
    type: "decision/option",
    status: row.status as OptionDecision["status"],
    severity: "medium",
    confidence: 1,
    blastRadius: "unknown",
    requiresRationale: false,
    dueByTick: null,
    extensionsUsed: 0,
    timedOut: false,
    resolution: null,
    resolvedBy: null,
    title: text,
    summary: text,
    options,
    ...(typeof payload.recommendedOptionId === "string" ? { recommendedOptionId: payload.recommendedOptionId } : {}),
  };
  return { decision, text, allowFreeText: payload.allowFreeText !== false };
}
