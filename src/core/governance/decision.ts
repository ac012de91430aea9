import { z } from "zod";
import type { BlastRadius, ControlMode } from "./escalation";
import type { TrustOutcome } from "./trust";

/**
 * Decisions a human answers (seed 002 `OptionDecisionEvent`, `ToolApprovalEvent`, `Resolution`,
 * "Decision timeout policy"): the records, validating a resolution against its decision, the trust
 * outcome a resolution earns, and the tick-driven timeout state machine.
 */

/** Seed 002 `Severity`, lowest first: `escalate` moves one step right. */
export const SEVERITIES = ["warning", "low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export type DecisionStatus = "pending" | "resolved" | "suspended" | "cancelled";

export interface DecisionOption {
  id: string;
  label: string;
  description: string;
  tradeoffs?: string;
}

interface DecisionBase {
  id: string;
  agentId: string;
  status: DecisionStatus;
  severity: Severity;
  /** 0–1. */
  confidence: number;
  blastRadius: BlastRadius;
  requiresRationale: boolean;
  /** Absolute tick at which the timeout policy fires; null = never (seed 002 `dueByTick`). */
  dueByTick: number | null;
  extensionsUsed: number;
  /** The Queue's "timed out" badge after an `escalate`. */
  timedOut: boolean;
  resolution: Resolution | null;
  resolvedBy: "human" | "timeout" | null;
}

export interface ToolApprovalDecision extends DecisionBase {
  type: "decision/tool_approval";
  toolName: string;
  toolArgs: Record<string, unknown>;
}

export interface OptionDecision extends DecisionBase {
  type: "decision/option";
  title: string;
  summary: string;
  options: DecisionOption[];
  recommendedOptionId?: string;
}

export type Decision = ToolApprovalDecision | OptionDecision;

/** Seed 002 `Resolution` as `POST /v1/decisions/:id/resolve` accepts it. */
export const resolutionSchema = z
  .object({
    resolutionType: z.enum(["approve", "reject", "modify", "choose_option"]),
    chosenOptionId: z.string().min(1).optional(),
    modifiedArgs: z.record(z.string(), z.unknown()).optional(),
    /** Session-scoped, exact tool name (seed 002 "alwaysApprove semantics"). */
    alwaysApprove: z.boolean().optional(),
    rationale: z.string().optional(),
    actionKind: z.enum(["create", "update", "delete", "review", "deploy"]).optional(),
  })
  .strict();
export type Resolution = z.infer<typeof resolutionSchema>;

export type ResolutionCheck =
  | { ok: true; resolution: Resolution }
  | { ok: false; code: "decision_not_pending"; status: DecisionStatus }
  | { ok: false; code: "invalid_resolution"; field: keyof Resolution; message: string };

const invalid = (field: keyof Resolution, message: string): ResolutionCheck => ({ ok: false, code: "invalid_resolution", field, message });

/** Which resolution types each decision type accepts, and which fields each may carry. */
const ALLOWED: Record<Decision["type"], Partial<Record<Resolution["resolutionType"], ReadonlyArray<keyof Resolution>>>> = {
  "decision/tool_approval": { approve: ["alwaysApprove"], reject: [], modify: ["modifiedArgs"] },
  "decision/option": { choose_option: ["chosenOptionId"], reject: [] },
};
const EXCLUSIVE_FIELDS = ["chosenOptionId", "modifiedArgs", "alwaysApprove"] as const;

/** Checks a resolution against the decision it answers; only pending decisions can be resolved. */
export function validateResolution(decision: Decision, resolution: Resolution): ResolutionCheck {
  if (decision.status !== "pending") return { ok: false, code: "decision_not_pending", status: decision.status };
  const fields = ALLOWED[decision.type][resolution.resolutionType];
  if (fields === undefined) {
    return invalid("resolutionType", `${resolution.resolutionType} is not valid for ${decision.type}`);
  }
  for (const field of EXCLUSIVE_FIELDS) {
    const value = resolution[field];
    if (value !== undefined && value !== false && !fields.includes(field)) {
      return invalid(field, `${field} is not allowed with ${resolution.resolutionType}`);
    }
  }
  if (resolution.resolutionType === "modify" && resolution.modifiedArgs === undefined) {
    return invalid("modifiedArgs", "modify requires modifiedArgs");
  }
  if (resolution.resolutionType === "choose_option" && decision.type === "decision/option") {
    if (resolution.chosenOptionId === undefined) return invalid("chosenOptionId", "choose_option requires chosenOptionId");
    if (!decision.options.some((option) => option.id === resolution.chosenOptionId)) {
      return invalid("chosenOptionId", `unknown option ${resolution.chosenOptionId}`);
    }
  }
  if (decision.requiresRationale && !resolution.rationale?.trim()) return invalid("rationale", "this decision requires a rationale");
  return { ok: true, resolution };
}

/** Seed 002 delta-table trigger for a human resolution; null when the table has no row for it. */
export function trustOutcomeForResolution(decision: Decision, resolution: Resolution): TrustOutcome | null {
  if (decision.type === "decision/tool_approval") {
    switch (resolution.resolutionType) {
      case "approve":
        return resolution.alwaysApprove ? "human_approves_always" : "human_approves_tool_call";
      case "modify":
        return "human_modifies_tool_args";
      case "reject":
        return "human_rejects_tool_call";
      default:
        return null;
    }
  }
  if (resolution.resolutionType !== "choose_option" || decision.recommendedOptionId === undefined) return null;
  return resolution.chosenOptionId === decision.recommendedOptionId ? "human_approves_recommended_option" : "human_picks_non_recommended";
}

export type ResolveResult =
  | { ok: true; decision: Decision; trustOutcome: TrustOutcome | null }
  | Exclude<ResolutionCheck, { ok: true }>;

/** A human resolves a decision: validate, then mark it resolved with the trust outcome to apply. */
export function resolveDecision(decision: Decision, resolution: Resolution): ResolveResult {
  const check = validateResolution(decision, resolution);
  if (!check.ok) return check;
  return {
    ok: true,
    decision: { ...decision, status: "resolved", resolution, resolvedBy: "human" },
    trustOutcome: trustOutcomeForResolution(decision, resolution),
  };
}

export type OnTimeout = "auto_recommend" | "escalate" | "cancel" | "extend";

/** Seed 002 `DecisionTimeoutPolicy`. */
export interface DecisionTimeoutPolicy {
  timeoutTicks: number | null;
  onTimeout: OnTimeout;
  maxExtensions?: number;
}

/** Seed 002: `extend` falls through to `escalate` after 2 extensions by default. */
export const DEFAULT_MAX_EXTENSIONS = 2;

export const decisionTimeoutPolicySchema = z
  .object({
    timeoutTicks: z.number().int().positive().nullable(),
    onTimeout: z.enum(["auto_recommend", "escalate", "cancel", "extend"]),
    maxExtensions: z.number().int().min(0).optional(),
  })
  .strict();

/**
 * Seed 002 "Default policy per control mode". Orchestrator never times out (its `onTimeout` is inert);
 * adaptive uses the seed's Phase 3 `escalate` (Phase 0/1 used `auto_recommend`); ecosystem 20 ticks `auto_recommend`.
 */
export const DEFAULT_DECISION_TIMEOUT_POLICIES: Readonly<Record<ControlMode, DecisionTimeoutPolicy>> = {
  orchestrator: { timeoutTicks: null, onTimeout: "escalate" },
  adaptive: { timeoutTicks: 50, onTimeout: "escalate" },
  ecosystem: { timeoutTicks: 20, onTimeout: "auto_recommend" },
};

/** Seed 002: an event may carry `dueByTick` (null = no timeout); if omitted the backend stamps it at ingestion. */
export function stampDueByTick(currentTick: number, policy: DecisionTimeoutPolicy, provided?: number | null): number | null {
  if (provided !== undefined) return provided;
  return policy.timeoutTicks === null ? null : currentTick + policy.timeoutTicks;
}

type Bookkeeping = "status" | "dueByTick" | "extensionsUsed" | "timedOut" | "resolution" | "resolvedBy";

/** What an agent's decision event supplies; `dueByTick` as on the seed's events (omitted = stamp from policy). */
export type NewDecision = (Omit<ToolApprovalDecision, Bookkeeping> | Omit<OptionDecision, Bookkeeping>) & { dueByTick?: number | null };

/** Opens a pending decision with its timeout stamped. */
export function openDecision(input: NewDecision, policy: DecisionTimeoutPolicy, currentTick: number): Decision {
  const dueByTick = stampDueByTick(currentTick, policy, input.dueByTick);
  return { ...input, status: "pending", dueByTick, extensionsUsed: 0, timedOut: false, resolution: null, resolvedBy: null } as Decision;
}

/** Seed 002 brake step 5: a braked agent's pending decisions are suspended, not discarded. */
export function suspendDecision(decision: Decision): Decision {
  return decision.status === "pending" ? { ...decision, status: "suspended" } : decision;
}

/** Resuming the agent reactivates its suspended decisions with a fresh timeout (the wait while braked does not count). */
export function resumeDecision(decision: Decision, policy: DecisionTimeoutPolicy, currentTick: number): Decision {
  if (decision.status !== "suspended") return decision;
  const dueByTick = decision.dueByTick === null ? null : stampDueByTick(currentTick, policy);
  return { ...decision, status: "pending", dueByTick };
}

export type DecisionTickResult =
  | { action: "none"; decision: Decision }
  | { action: "auto_resolved"; decision: Decision; resolution: Resolution; trustOutcome: "decision_auto_resolved"; path: OnTimeout[] }
  | { action: "extended"; decision: Decision; path: OnTimeout[] }
  | { action: "escalated"; decision: Decision; from: Severity; to: Severity; path: OnTimeout[] }
  | { action: "cancelled"; decision: Decision; toolCallRejected: boolean; path: OnTimeout[] };

/**
 * Runs the timeout policy for one tick. Fall-throughs follow the seed: `extend` past `maxExtensions`
 * → `escalate`; `escalate` at `critical` → `cancel`; `auto_recommend` with no valid recommendation
 * → `escalate`. Timeouts never change trust beyond `decision_auto_resolved` (0).
 */
export function onDecisionTick(decision: Decision, policy: DecisionTimeoutPolicy, tick: number): DecisionTickResult {
  if (decision.status !== "pending" || decision.dueByTick === null || tick < decision.dueByTick || policy.timeoutTicks === null) {
    return { action: "none", decision };
  }
  const rearmed = tick + policy.timeoutTicks;
  const path: OnTimeout[] = [];
  let step: OnTimeout = policy.onTimeout;
  for (;;) {
    path.push(step);
    if (step === "extend") {
      if (decision.extensionsUsed < (policy.maxExtensions ?? DEFAULT_MAX_EXTENSIONS)) {
        return { action: "extended", decision: { ...decision, dueByTick: rearmed, extensionsUsed: decision.extensionsUsed + 1 }, path };
      }
      step = "escalate";
    } else if (step === "auto_recommend") {
      const resolution = autoRecommendation(decision);
      if (resolution !== null) {
        const resolved: Decision = { ...decision, status: "resolved", resolution, resolvedBy: "timeout" };
        return { action: "auto_resolved", decision: resolved, resolution, trustOutcome: "decision_auto_resolved", path };
      }
      step = "escalate";
    } else if (step === "escalate") {
      const to = SEVERITIES[SEVERITIES.indexOf(decision.severity) + 1];
      if (to !== undefined) {
        const escalated: Decision = { ...decision, severity: to, timedOut: true, dueByTick: rearmed };
        return { action: "escalated", decision: escalated, from: decision.severity, to, path };
      }
      step = "cancel";
    } else {
      const cancelled: Decision = { ...decision, status: "cancelled", resolvedBy: "timeout" };
      return { action: "cancelled", decision: cancelled, toolCallRejected: decision.type === "decision/tool_approval", path };
    }
  }
}

/** The agent's recommendation as a resolution: approve a tool call, or choose the recommended option if it exists. */
function autoRecommendation(decision: Decision): Resolution | null {
  if (decision.type === "decision/tool_approval") return { resolutionType: "approve" };
  const recommended = decision.options.find((option) => option.id === decision.recommendedOptionId);
  return recommended === undefined ? null : { resolutionType: "choose_option", chosenOptionId: recommended.id };
}
