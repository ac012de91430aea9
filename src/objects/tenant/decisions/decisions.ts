import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { writeAudit } from "../governance";
import { tickAt } from "../../../core/governance/approval-facts";
import { resolveDecision, resumeDecision, type DecisionOption, type DecisionTimeoutPolicy, type OptionDecision, type Resolution } from "../../../core/governance/decision";
import { H } from "../../../core/ids/hash";
import * as schema from "../../../db/tenant-schema";
import { runKeys, threadIds } from "../../../core/ids/run-keys";
import type { WakeJob } from "../../../schema/agents/wake";
import type { Authority } from "../../../core/wakes/provenance";
import { answeredBy, answererOf } from "./answerer";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import { inList } from "../../shared/statements/sql-in";
import { toCore, type ToolApprovals } from "./tool-approvals";
import type { TrustStore } from "./trust-store";
import type { TenantDb } from "../types";

export interface DecisionsDeps {
  db: TenantDb;
  trust: TrustStore;
  approvals: ToolApprovals;
  tickMs(): number;
  /** Wakes the tool sagas of resumed approvals so they re-read their decision and re-arm their wait. */
  wakeSagas(operationIds: string[]): void;
}

/** One audit row, written through whichever handle (the db, or a transaction) the caller holds. */
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

/**
 * Seed 002 decisions, tenant-wide: `decision/option` (an ask_user question, keyed by its operationId) and
 * `decision/tool_approval` (tool-approvals.ts). Resolution, trust outcomes, and brake suspension live here.
 */
export class Decisions {
  private readonly db: TenantDb;

  constructor(private readonly deps: DecisionsDeps) {
    this.db = deps.db;
  }

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
  page(query: { limit: number; status?: string | undefined; agentId?: string | undefined; type?: string | undefined; before?: { c: string; i: string } | undefined; agentIds?: readonly string[] | undefined; widgetNamespace?: string | undefined }): { data: DecisionRecord[]; last: DecisionRecord | null } {
    const d = schema.decisions;
    const conditions = [];
    if (query.widgetNamespace !== undefined) conditions.push(inWidgetThreadSql(query.widgetNamespace));
    if (query.status) conditions.push(eq(d.status, query.status));
    if (query.agentId) conditions.push(eq(d.agentId, query.agentId));
    if (query.type) conditions.push(eq(d.type, query.type));
    if (query.agentIds) conditions.push(inList(d.agentId, query.agentIds));
    const { rows, last } = keysetPage(this.db, { table: d, sort: d.createdAt, tieBreak: d.id, order: "desc", where: conditions, limit: query.limit, from: query.before });
    return { data: rows, last };
  }

  get(id: string): DecisionRecord | null {
    return this.db.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get() ?? null;
  }

  /**
   * A person answers an ask_user decision: validate with the core, then (one transaction) mark the row
   * resolved and audit `decision.resolved`. Returns the wake that carries the answer to the asking agent.
   */
  resolve(id: string, body: ResolveBody, actor: string, visibleAgents?: readonly string[]): ResolveOutcome {
    return this.db.transaction((tx) => {
      const row = tx.select().from(schema.decisions).where(eq(schema.decisions.id, id)).get();
      if (!row || (visibleAgents && !visibleAgents.includes(row.agentId))) return { ok: false, code: "not_found", message: "decision not found" };
      if (row.type === "decision/tool_approval") {
        // A repeat re-sends the saga's wake-up too: it heals an event lost after the first resolve committed.
        if (row.status !== "pending") return { ok: false, code: "decision_not_pending", message: `decision is ${row.status}`, ...(row.status === "resolved" && row.operationId ? { saga: { operationId: row.operationId } } : {}) };
        return this.deps.approvals.resolve(tx as unknown as TenantDb, row, body, actor);
      }
      if (row.type !== "decision/option" || row.payload.kind !== "ask_user") return { ok: false, code: "not_found", message: "decision not found" };
      return this.resolveQuestion(tx as unknown as TenantDb, row, body, actor);
    });
  }

  private resolveQuestion(tx: TenantDb, row: DecisionRecord, body: ResolveBody, actor: string): ResolveOutcome {
    const id = row.id;
    {
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
      const updated = markResolved(tx, id, stored, resolvedAt);
      if (!updated) return { ok: false, code: "decision_not_pending", message: "decision is no longer pending" };
      tx.insert(schema.audit)
        .values({ at: resolvedAt, actor, action: "decision.resolved", target: id, detail: { agentId: row.agentId, resolutionType: resolution.resolutionType, chosenOptionId: chosen?.id ?? null, freeText: answerText !== undefined, ...answeredBy(actor) } })
        .run();
      if (checked.trustOutcome) {
        const change = this.deps.trust.apply(row.agentId, checked.trustOutcome, tickAt(Date.now(), this.deps.tickMs()), tx);
        writeAudit(tx, "system", "trust.updated", row.agentId, { decisionId: id, ...change });
      }
      return {
        ok: true,
        decision: updated,
        answer: answerOf(row, question.text, stored),
      };
    }
  }

  /**
   * Destroy means stop (issue 13): every open decision of the agent — asked questions and tool approvals,
   * pending or held by a brake — is cancelled (resolvedBy `agent_destroyed`, audited), so nobody can
   * answer it later. Returns the tool approvals' operationIds: their sagas are told to read the outcome.
   */
  cancelForAgent(agentId: string): string[] {
    const d = schema.decisions;
    const open = this.db.select().from(d).where(and(eq(d.agentId, agentId), inArray(d.status, ["pending", "suspended"]))).all();
    const resolvedAt = nowIso();
    const operationIds: string[] = [];
    for (const row of open) {
      if (row.payload.kind === "brake_release") continue;
      const cancelled = this.db
        .update(d)
        .set({ status: "cancelled", resolution: { resolvedBy: "agent_destroyed", actor: "system" }, resolvedAt })
        .where(and(eq(d.id, row.id), eq(d.status, row.status)))
        .returning({ id: d.id })
        .all();
      if (cancelled.length === 0) continue;
      writeAudit(this.db, "system", "decision.cancelled", row.id, { agentId, type: row.type, resolvedBy: "agent_destroyed" });
      if (row.type === "decision/tool_approval" && row.operationId) operationIds.push(row.operationId);
    }
    return operationIds;
  }

  /**
   * Double texting `interrupt` (issue 15 §4): the open tool approvals of an interrupted run are cancelled
   * (resolvedBy `interrupted`, audited) unless a person already answered them; an approved call still runs.
   * Returns the operationIds cancelled: their sagas are told to read the outcome.
   */
  cancelApprovals(agentId: string, operationIds: ReadonlyArray<string>): string[] {
    const d = schema.decisions;
    if (operationIds.length === 0) return [];
    const open = this.db
      .select()
      .from(d)
      .where(and(eq(d.agentId, agentId), eq(d.type, "decision/tool_approval"), inArray(d.operationId, [...operationIds]), inArray(d.status, ["pending", "suspended"])))
      .all();
    const resolvedAt = nowIso();
    const cancelled: string[] = [];
    for (const row of open) {
      const changed = this.db
        .update(d)
        .set({ status: "cancelled", resolution: { resolvedBy: "interrupted", actor: "system" }, resolvedAt })
        .where(and(eq(d.id, row.id), eq(d.status, row.status)))
        .returning({ id: d.id })
        .all();
      if (changed.length === 0 || !row.operationId) continue;
      writeAudit(this.db, "system", "decision.cancelled", row.id, { agentId, type: row.type, resolvedBy: "interrupted" });
      cancelled.push(row.operationId);
    }
    return cancelled;
  }

  // ── Brakes (helper "brakes"): a brake holds back the pending decisions it covers, and lets them go on release ──

  /** Pending → suspended for the filter's agents (or one tool's approvals); brake decisions themselves are never held. */
  suspendPending(filter: DecisionHoldFilter): number {
    return this.hold(filter, "pending", "suspended");
  }

  /** Suspended → pending again (the caller re-suspends what another active brake still covers). */
  resumeSuspended(filter: DecisionHoldFilter): number {
    return this.hold(filter, "suspended", "pending");
  }

  private hold(filter: DecisionHoldFilter, from: string, to: string): number {
    const d = schema.decisions;
    const scope = "agentIds" in filter ? inList(d.agentId, filter.agentIds) : undefined;
    const rows = this.db.select().from(d).where(scope ? and(eq(d.status, from), scope) : eq(d.status, from)).all();
    const held = rows.filter((row) => row.payload.kind !== "brake_release" && (!("toolName" in filter) || row.payload.toolName === filter.toolName));
    const nowMs = Date.now();
    for (const row of held) {
      // A resumed tool approval gets a fresh timeout: the time spent braked does not count against the person.
      const payload = to === "pending" && row.type === "decision/tool_approval" ? this.rearmed(row, nowMs) : row.payload;
      this.db.update(d).set({ status: to, payload }).where(and(eq(d.id, row.id), eq(d.status, from))).run();
      writeAudit(this.db, "system", to === "suspended" ? "decision.suspended" : "decision.resumed", row.id, { agentId: row.agentId, type: row.type });
    }
    if (to === "pending") this.deps.wakeSagas(held.filter((row) => row.type === "decision/tool_approval" && row.operationId).map((row) => row.operationId!));
    return held.length;
  }

  private rearmed(row: DecisionRecord, nowMs: number): Record<string, unknown> {
    const policy = row.payload.timeoutPolicy as DecisionTimeoutPolicy;
    const tickMs = typeof row.payload.tickMs === "number" ? row.payload.tickMs : this.deps.tickMs();
    const resumed = resumeDecision({ ...toCore(row), status: "suspended" }, policy, tickAt(nowMs, tickMs));
    const dueAtMs = resumed.dueByTick === null || policy.timeoutTicks === null ? null : nowMs + policy.timeoutTicks * tickMs;
    return { ...row.payload, dueByTick: resumed.dueByTick, dueAtMs };
  }
}

/** Which decisions a brake holds: some agents', every agent's, or the approvals of one tool (`payload.toolName`). */
export type DecisionHoldFilter = { agentIds: string[] } | { allAgents: true } | { toolName: string };

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
  /** Who answered, as the asking agent reads it: an operator's answer instructs, a visitor's is evidence. */
  authority: Authority;
}

/** `answer`: the wake for an ask_user question; `saga`: the tool saga to wake with a "decision" event. */
export type ResolveOutcome =
  | { ok: true; decision: DecisionRecord; answer?: DecisionAnswer; saga?: { operationId: string } }
  | { ok: false; code: "not_found"; message: string }
  | { ok: false; code: "forbidden"; message: string }
  | { ok: false; code: "decision_not_pending"; message: string; answer?: DecisionAnswer; saga?: { operationId: string } }
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
    authority: answer.authority,
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
    authority: answererOf(String(resolution.actor ?? "")).authority,
  };
}

/** The stored ask_user row as the core's `decision/option`. */
function questionOf(row: DecisionRecord): { decision: OptionDecision; text: string; allowFreeText: boolean } {
  const decision = optionDecisionOf(row, "medium");
  return { decision, text: decision.title, allowFreeText: row.payload.allowFreeText !== false };
}

/**
 * A stored option row (`payload.question`, `payload.options`, optional `payload.recommendedOptionId`) as the
 * core's `decision/option`, pending and unresolved: the core validates a resolution against it.
 */
export function optionDecisionOf(row: DecisionRecord, severity: OptionDecision["severity"]): OptionDecision {
  const payload = row.payload;
  const text = String(payload.question ?? "");
  const options: DecisionOption[] = (Array.isArray(payload.options) ? payload.options : []).map((raw) => {
    const option = raw as { id?: unknown; label?: unknown; description?: unknown };
    return { id: String(option.id), label: String(option.label ?? option.id), description: typeof option.description === "string" ? option.description : "" };
  });
  return {
    id: row.id,
    agentId: row.agentId,
    type: "decision/option",
    status: row.status as OptionDecision["status"],
    severity,
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
}

/**
 * SQL twin of core/runtime/widget-session `inWidgetThread` for the row's own agent: the decision's `payload.threadId`
 * is `<agentId>:session:<base>` or starts with `<agentId>:session:<base>_` (substr, not LIKE: `_` is a wildcard there).
 */
function inWidgetThreadSql(base: string) {
  const d = schema.decisions;
  const thread = sql`json_extract(${d.payload}, '$.threadId')`;
  const own = sql`${d.agentId} || ':session:' || ${base}`;
  return sql`(${thread} = ${own} OR substr(${thread}, 1, length(${own}) + 1) = ${own} || '_')`;
}

/** Resolves a decision only if it is still pending (compare-and-set); null when another answer won. */
export function markResolved(tx: TenantDb, id: string, resolution: Record<string, unknown>, resolvedAt: string) {
  return tx
    .update(schema.decisions)
    .set({ status: "resolved", resolution, resolvedAt })
    .where(and(eq(schema.decisions.id, id), eq(schema.decisions.status, "pending")))
    .returning()
    .get();
}
