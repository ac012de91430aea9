import { z } from "zod";
import type { TrustOutcome } from "./trust";

/**
 * Emergency brakes / kill switches (seed 002 "Emergency Brake"). The seed's `workstream`
 * scope becomes `kind` (agent kind) here, and `tool` is added. A brake stops new wakes, blocks
 * mutating tools and tells in-flight runs how to settle; it never deletes anything.
 */

export type BrakeScope =
  | { type: "all" }
  | { type: "agent"; agentId: string }
  | { type: "kind"; kind: string }
  | { type: "tool"; toolName: string };

/** Seed 002: pause for review vs. terminate. */
export type BrakeBehavior = "pause" | "kill";

/** Seed 002 `BrakeReleaseCondition`; default `manual`. */
export type BrakeReleaseCondition =
  | { type: "manual" }
  | { type: "timer"; releaseAfterMs: number }
  | { type: "decision"; decisionId: string };

export interface Brake {
  id: string;
  scope: BrakeScope;
  behavior: BrakeBehavior;
  reason: string;
  /** A user id, or `system` for an automatic brake. */
  initiatedBy: string;
  createdAtMs: number;
  releaseCondition: BrakeReleaseCondition;
  releasedAtMs: number | null;
  releasedBy: string | null;
}

/** `POST /v1/brakes` body (seed 002 `BrakeAction` minus server-assigned fields). */
export const brakeActionSchema = z
  .object({
    scope: z.discriminatedUnion("type", [
      z.object({ type: z.literal("all") }).strict(),
      z.object({ type: z.literal("agent"), agentId: z.string().min(1) }).strict(),
      z.object({ type: z.literal("kind"), kind: z.string().min(1) }).strict(),
      z.object({ type: z.literal("tool"), toolName: z.string().min(1) }).strict(),
    ]),
    behavior: z.enum(["pause", "kill"]),
    reason: z.string().min(1),
    releaseCondition: z
      .discriminatedUnion("type", [
        z.object({ type: z.literal("manual") }).strict(),
        z.object({ type: z.literal("timer"), releaseAfterMs: z.number().int().positive() }).strict(),
        z.object({ type: z.literal("decision"), decisionId: z.string().min(1) }).strict(),
      ])
      .default({ type: "manual" }),
  })
  .strict();
export type BrakeAction = z.infer<typeof brakeActionSchema>;

/** When a timer brake lets go by itself (for the DO alarm), or null. */
export function timerReleaseAtMs(brake: Brake): number | null {
  return brake.releaseCondition.type === "timer" ? brake.createdAtMs + brake.releaseCondition.releaseAfterMs : null;
}

/** Active = engaged, not released, and (for a timer brake) not yet expired. */
export function isBrakeActive(brake: Brake, nowMs: number): boolean {
  if (nowMs < brake.createdAtMs) return false;
  if (brake.releasedAtMs !== null && brake.releasedAtMs <= nowMs) return false;
  const expiresAt = timerReleaseAtMs(brake);
  return expiresAt === null || nowMs < expiresAt;
}

export interface BrakeTarget {
  agentId: string;
  kind: string;
  toolName?: string;
}

function scopeMatches(scope: BrakeScope, target: BrakeTarget): boolean {
  switch (scope.type) {
    case "all":
      return true;
    case "agent":
      return scope.agentId === target.agentId;
    case "kind":
      return scope.kind === target.kind;
    case "tool":
      return target.toolName !== undefined && scope.toolName === target.toolName;
  }
}

/**
 * The active brakes that apply to an agent (and, if given, one of its tools), most severe first:
 * kill before pause, then oldest first, so every caller picks the same governing brake.
 */
export function activeBrakesFor(target: BrakeTarget, brakes: readonly Brake[], nowMs: number): Brake[] {
  return brakes
    .filter((brake) => isBrakeActive(brake, nowMs) && scopeMatches(brake.scope, target))
    .sort((a, b) => severity(b) - severity(a) || a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const severity = (brake: Brake): number => (brake.behavior === "kill" ? 1 : 0);

/** What is asking to proceed. */
export type BrakeRequest =
  | { type: "wake" }
  | { type: "tool"; toolName: string; mutating: boolean }
  /** An in-flight run asking whether to take its next step. */
  | { type: "run_step" };

/**
 * How a refused request settles: `defer` keeps a wake queued (with its runKey) until release; `drop` records
 * it as refused; `deny` fails a tool call; `suspend` parks a run at its persisted position; `terminate` ends it.
 */
export type BrakeDisposition = "defer" | "drop" | "deny" | "suspend" | "terminate";

export type BrakeVerdict =
  | { admit: true }
  | { admit: false; code: "brake_active"; brakeId: string; behavior: BrakeBehavior; disposition: BrakeDisposition };

/**
 * Decides one request under the brakes in force. Agent-wide brakes (`all`, `agent`, `kind`) stop wakes
 * and run steps and block mutating tools; a `pause` still lets read-only tools run, a `kill` does not.
 * A `tool` brake blocks that tool only (read or write) and leaves wakes and runs alone.
 */
export function admitUnderBrakes(
  agent: { agentId: string; kind: string },
  request: BrakeRequest,
  brakes: readonly Brake[],
  nowMs: number,
): BrakeVerdict {
  const toolName = request.type === "tool" ? request.toolName : undefined;
  for (const brake of activeBrakesFor({ ...agent, ...(toolName !== undefined && { toolName }) }, brakes, nowMs)) {
    const disposition = dispositionFor(brake, request);
    if (disposition !== null) return { admit: false, code: "brake_active", brakeId: brake.id, behavior: brake.behavior, disposition };
  }
  return { admit: true };
}

function dispositionFor(brake: Brake, request: BrakeRequest): BrakeDisposition | null {
  const toolBrake = brake.scope.type === "tool";
  switch (request.type) {
    case "wake":
      return toolBrake ? null : brake.behavior === "pause" ? "defer" : "drop";
    case "run_step":
      return toolBrake ? null : brake.behavior === "pause" ? "suspend" : "terminate";
    case "tool":
      return toolBrake || request.mutating || brake.behavior === "kill" ? "deny" : null;
  }
}

export type ReleaseResult = { ok: true; brake: Brake } | { ok: false; code: "brake_not_active" };

/** A human may release any active brake early, whatever its release condition. */
export function releaseBrake(brake: Brake, nowMs: number, releasedBy: string): ReleaseResult {
  if (!isBrakeActive(brake, nowMs)) return { ok: false, code: "brake_not_active" };
  return { ok: true, brake: { ...brake, releasedAtMs: nowMs, releasedBy } };
}

/** Seed 002: a `decision` brake lets go when its decision resolves. Returns the brakes that changed. */
export function releaseBrakesForDecision(brakes: readonly Brake[], decisionId: string, nowMs: number): Brake[] {
  return brakes
    .filter((b) => b.releaseCondition.type === "decision" && b.releaseCondition.decisionId === decisionId && isBrakeActive(b, nowMs))
    .map((b) => ({ ...b, releasedAtMs: nowMs, releasedBy: `decision:${decisionId}` }));
}

/**
 * Seed 002 step 4: braked agents take the -3 `human_overrides_via_brake`. A `tool` brake is about the tool,
 * not about an agent's work, so it costs no trust.
 */
export function brakeTrustOutcome(brake: Brake): TrustOutcome | null {
  return brake.scope.type === "tool" ? null : "human_overrides_via_brake";
}
