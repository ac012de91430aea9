import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { activeBrakesFor, isBrakeActive, releaseBrake, timerReleaseAtMs, type Brake, type BrakeScope } from "../../../core/governance/brakes";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import type { BrakeView, EngageBrakeBody } from "../../../schema/admin/brakes";
import type { TenantDb } from "../types";
import { keysetPage } from "../../shared/keyset";

/** Which pending decisions a brake holds back: those of some agents, or approvals of one tool. */
export type DecisionFilter = { agentIds: string[] } | { allAgents: true } | { toolName: string };

/** The option decision a `release: decision` brake opens: a person chooses keep or release. */
export interface BrakeDecisionRequest {
  brakeId: string;
  /** The braked agent for scope agent; `*` (no agent) otherwise, so widget tokens never see it. */
  agentId: string;
  question: string;
  options: Array<{ id: "keep" | "release"; label: string; description: string }>;
}

export interface TenantBrakesDeps {
  db: TenantDb;
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void;
  openDecision(request: BrakeDecisionRequest): string;
  suspendDecisions(filter: DecisionFilter): void;
  resumeDecisions(filter: DecisionFilter): void;
  /** Arms the TenantDO alarm no later than `atMs` (a timer brake's release). */
  armAlarmAt(atMs: number): void;
  /** Publishes a tenant event (tenant stream, outbound webhooks); the free-text reason stays in the audit log. */
  publish?(type: "brake.engaged" | "brake.released", data: Record<string, unknown>): void;
  now?: () => number;
}

export const BRAKE_DECISION_KIND = "brake_release";

/**
 * The tenant's brakes (seed 002 "Emergency Brake"): engage, list, release (manual, timer,
 * decision), and the active set an agent consults at run start, at every step boundary and before
 * each tool call. Rows are never deleted; a timer brake is inactive from `releaseAt` on whether or
 * not the release sweep has recorded it yet, so consulting never depends on the alarm having fired.
 */
export class TenantBrakes {
  constructor(private readonly deps: TenantBrakesDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * `keyedId` (under an Idempotency-Key, see `requestKeyedId`): a brake already holding it was engaged by the first
   * attempt; it is the answer, with no second decision, audit entry or event.
   */
  engage(actor: string, body: EngageBrakeBody, keyedId?: string): Result<{ brake: BrakeView }> {
    if (keyedId !== undefined) {
      const engaged = this.get(keyedId);
      if (engaged) return { ok: true, brake: engaged };
    }
    const now = this.now();
    const scope = scopeOf(body);
    if (scope.type === "agent" && !this.deps.db.select({ id: schema.agentDirectory.id }).from(schema.agentDirectory).where(eq(schema.agentDirectory.id, scope.agentId)).get()) return failure("invalid_reference", `target: no agent ${scope.agentId} in this tenant`);
    let releaseAfterMs = 0;
    if (body.release === "timer") {
      releaseAfterMs = Date.parse(body.releaseAt!) - now;
      if (!(releaseAfterMs > 0)) return failure("validation_failed", "releaseAt: must be in the future");
    }
    const id = keyedId ?? randomId("brk_");
    const decisionId =
      body.release === "decision"
        ? this.deps.openDecision({
            brakeId: id,
            agentId: scope.type === "agent" ? scope.agentId : "*",
            question: `Release brake ${id} (${body.behaviour} ${describeScope(scope)})? Reason given: ${body.reason}`,
            options: [
              { id: "keep", label: "Keep the brake engaged", description: "Nothing resumes; release it later by hand" },
              { id: "release", label: "Release the brake", description: "Wakes, tools and held decisions resume" },
            ],
          })
        : null;
    const brake: Brake = {
      id,
      scope,
      behavior: body.behaviour,
      reason: body.reason,
      initiatedBy: actor,
      createdAtMs: now,
      releaseCondition: body.release === "timer" ? { type: "timer", releaseAfterMs } : decisionId ? { type: "decision", decisionId } : { type: "manual" },
      releasedAtMs: null,
      releasedBy: null,
    };
    this.deps.db
      .insert(schema.brakes)
      .values({ id, body: brake as unknown as Record<string, unknown>, createdAtMs: now, releaseAtMs: timerReleaseAtMs(brake), releasedAtMs: null, decisionId })
      .run();
    this.deps.suspendDecisions(decisionFilter(brake, this.agentIdsOfKind));
    this.deps.audit(actor, "brake.engaged", id, { scope: scope.type, target: targetOf(scope), behaviour: brake.behavior, release: brake.releaseCondition.type, reason: brake.reason, decisionId });
    this.deps.publish?.("brake.engaged", { brakeId: id, scope: scope.type, target: targetOf(scope), behaviour: brake.behavior, release: brake.releaseCondition.type, decisionId });
    const releaseAt = timerReleaseAtMs(brake);
    if (releaseAt !== null) this.deps.armAlarmAt(releaseAt);
    return { ok: true, brake: viewOf(brake, now) };
  }

  /** Newest first; `status` narrows to active or released brakes. */
  list(query: { limit: number; status?: "active" | "released" | undefined; before?: { c: number; i: string } | undefined }): { data: BrakeView[]; last: { c: number; i: string } | null } {
    this.sweep();
    const b = schema.brakes;
    const conditions = [];
    if (query.status === "active") conditions.push(isNull(b.releasedAtMs));
    if (query.status === "released") conditions.push(isNotNull(b.releasedAtMs));
    const { rows, last } = keysetPage(this.deps.db, { table: b, sort: b.createdAtMs, tieBreak: b.id, order: "desc", where: conditions, limit: query.limit, from: query.before });
    const now = this.now();
    return { data: rows.map((row) => viewOf(brakeOf(row), now)), last: last ? { c: last.createdAtMs, i: last.id } : null };
  }

  get(id: string): BrakeView | null {
    this.sweep();
    const row = this.deps.db.select().from(schema.brakes).where(eq(schema.brakes.id, id)).get();
    return row ? viewOf(brakeOf(row), this.now()) : null;
  }

  /**
   * A person releases an active brake early, whatever its release condition (seed 002). `keyed` (the request
   * carries an Idempotency-Key): a brake this same actor already released is the answer, so a retry after a lapsed
   * claim answers like the first attempt instead of 409 (and releases nothing twice).
   */
  release(actor: string, id: string, keyed = false): Result<{ brake: BrakeView }> {
    this.sweep();
    const row = this.deps.db.select().from(schema.brakes).where(eq(schema.brakes.id, id)).get();
    if (!row) return failure("not_found", "brake not found");
    const brake = brakeOf(row);
    const released = releaseBrake(brake, this.now(), actor);
    if (!released.ok && keyed && brake.releasedBy === actor) return { ok: true, brake: viewOf(brake, this.now()) };
    if (!released.ok) return failure("conflict", `brake ${id} is not active (already released)`);
    this.store(released.brake, actor, "manual");
    return { ok: true, brake: viewOf(released.brake, this.now()) };
  }

  /** The brake decision was resolved: choosing `release` lets the brake go; `keep` (or reject) leaves it for a manual release. */
  decisionResolved(decisionId: string, chosenOptionId: string | null, actor: string): void {
    const row = this.deps.db.select().from(schema.brakes).where(eq(schema.brakes.decisionId, decisionId)).get();
    if (!row) return;
    const brake = brakeOf(row);
    if (chosenOptionId !== "release" || !isBrakeActive(brake, this.now())) return;
    this.store({ ...brake, releasedAtMs: this.now(), releasedBy: `decision:${decisionId}` }, actor, "decision");
  }

  /** Active brakes that may concern this agent: agent-wide ones matching it, and every tool brake. */
  activeFor(agent: { agentId: string; kind: string }): Brake[] {
    this.sweep();
    const now = this.now();
    const active = this.deps.db.select().from(schema.brakes).where(isNull(schema.brakes.releasedAtMs)).all().map(brakeOf);
    const agentWide = activeBrakesFor(agent, active, now);
    const toolBrakes = active.filter((brake) => brake.scope.type === "tool" && isBrakeActive(brake, now));
    return [...agentWide, ...toolBrakes.filter((brake) => !agentWide.includes(brake))];
  }

  /**
   * Records timer brakes whose time has come as released (audit, held decisions resume) and re-arms the
   * alarm for the next one. Runs from the alarm and whenever brakes are consulted.
   */
  sweep(): void {
    const now = this.now();
    const pending = this.deps.db
      .select()
      .from(schema.brakes)
      .where(and(isNull(schema.brakes.releasedAtMs), isNotNull(schema.brakes.releaseAtMs)))
      .all();
    let next: number | null = null;
    for (const row of pending) {
      const at = row.releaseAtMs!;
      if (at <= now) this.store({ ...brakeOf(row), releasedAtMs: at, releasedBy: "timer" }, "system", "timer");
      else next = next === null ? at : Math.min(next, at);
    }
    if (next !== null) this.deps.armAlarmAt(next);
  }

  private readonly agentIdsOfKind = (kind: string): string[] =>
    this.deps.db.select({ id: schema.agentDirectory.id }).from(schema.agentDirectory).where(eq(schema.agentDirectory.kind, kind)).all().map((row) => row.id);

  /** Persists a release, audits it, and lets held decisions go unless another active brake still holds them. */
  private store(brake: Brake, actor: string, how: "manual" | "timer" | "decision"): void {
    this.deps.db.update(schema.brakes).set({ body: brake as unknown as Record<string, unknown>, releasedAtMs: brake.releasedAtMs }).where(eq(schema.brakes.id, brake.id)).run();
    this.deps.audit(actor, "brake.released", brake.id, { how, scope: brake.scope.type, target: targetOf(brake.scope), behaviour: brake.behavior, releasedBy: brake.releasedBy });
    this.deps.publish?.("brake.released", { brakeId: brake.id, how, scope: brake.scope.type, target: targetOf(brake.scope), behaviour: brake.behavior });
    this.deps.resumeDecisions(decisionFilter(brake, this.agentIdsOfKind));
    const now = this.now();
    for (const row of this.deps.db.select().from(schema.brakes).where(isNull(schema.brakes.releasedAtMs)).all()) {
      const other = brakeOf(row);
      if (isBrakeActive(other, now)) this.deps.suspendDecisions(decisionFilter(other, this.agentIdsOfKind));
    }
  }
}

function scopeOf(body: EngageBrakeBody): BrakeScope {
  switch (body.scope) {
    case "all":
      return { type: "all" };
    case "agent":
      return { type: "agent", agentId: body.target! };
    case "kind":
      return { type: "kind", kind: body.target! };
    case "tool":
      return { type: "tool", toolName: body.target! };
  }
}

function targetOf(scope: BrakeScope): string | null {
  return scope.type === "agent" ? scope.agentId : scope.type === "kind" ? scope.kind : scope.type === "tool" ? scope.toolName : null;
}

const describeScope = (scope: BrakeScope) => (scope.type === "all" ? "all agents" : `${scope.type} ${targetOf(scope)}`);

function decisionFilter(brake: Brake, agentIdsOfKind: (kind: string) => string[]): DecisionFilter {
  switch (brake.scope.type) {
    case "all":
      return { allAgents: true };
    case "agent":
      return { agentIds: [brake.scope.agentId] };
    case "kind":
      return { agentIds: agentIdsOfKind(brake.scope.kind) };
    case "tool":
      return { toolName: brake.scope.toolName };
  }
}

function brakeOf(row: typeof schema.brakes.$inferSelect): Brake {
  return row.body as unknown as Brake;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The API's view: a timer brake past its time reads as released at `releaseAt`, even before the sweep recorded it. */
export function viewOf(brake: Brake, nowMs: number): BrakeView {
  const releaseAt = timerReleaseAtMs(brake);
  const active = isBrakeActive(brake, nowMs);
  const lapsed = !active && brake.releasedAtMs === null && releaseAt !== null;
  return {
    id: brake.id,
    scope: brake.scope.type,
    target: targetOf(brake.scope),
    behaviour: brake.behavior,
    release: brake.releaseCondition.type,
    releaseAt: iso(releaseAt),
    decisionId: brake.releaseCondition.type === "decision" ? brake.releaseCondition.decisionId : null,
    reason: brake.reason,
    initiatedBy: brake.initiatedBy,
    active,
    createdAt: new Date(brake.createdAtMs).toISOString(),
    releasedAt: iso(lapsed ? releaseAt : brake.releasedAtMs),
    releasedBy: lapsed ? "timer" : brake.releasedBy,
  };
}
