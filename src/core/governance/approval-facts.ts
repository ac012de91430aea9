import { DEFAULT_DECISION_TIMEOUT_POLICIES, type DecisionTimeoutPolicy, type Severity } from "./decision";
import {
  DEFAULT_ESCALATION_PROTOCOLS,
  shouldEscalate,
  type BlastRadius,
  type ControlMode,
  type EscalationFacts,
  type EscalationProtocol,
  type EscalationVerdict,
} from "./escalation";
import { H } from "../ids/hash";

/**
 * The bridge between a planned tool call and the seed 002 escalation engine: which facts a call
 * carries (blast radius, workstreams, confidence), whether it needs a human, and how long the
 * decision waits. Pure; the TenantDO supplies trust, grants and the target categories.
 */

/**
 * Confidence when the model offers none. Exactly the adaptive threshold (`confidence lt 0.8` is
 * false), so without a model signal trust and blast radius decide, and ecosystem's `lt 0.5` stays quiet.
 */
export const DEFAULT_CONFIDENCE = 0.8;

/** A tool's declared `riskLevel` as seed 002 `BlastRadius`; anything unclassified fails safe to `unknown`. */
export function blastRadiusForRisk(riskLevel: string): BlastRadius {
  switch (riskLevel) {
    case "low":
      return "trivial";
    case "medium":
      return "medium";
    case "high":
      return "large";
    default:
      return "unknown";
  }
}

/** The decision's starting severity (seed 002 `Severity`); `escalate` raises it one step per timeout. */
export function severityForRisk(riskLevel: string): Severity {
  return riskLevel === "low" ? "low" : riskLevel === "medium" ? "medium" : "high";
}

/** Seed 002 action categories the protocols' `alwaysEscalate`/`neverEscalate` lists name, from a tool's side-effect kind. */
export function actionCategoriesFor(sideEffectKind: string): string[] {
  switch (sideEffectKind) {
    case "none":
      return ["read"];
    case "external_http":
      return ["execute"];
    default:
      return ["write"];
  }
}

/** Seed 002 `affectsMultipleWorkstreams`: a workstream is a journal category, so targets in more than one. */
export function affectsMultipleWorkstreams(targetCategoryIds: Iterable<string>): boolean {
  return new Set(targetCategoryIds).size > 1;
}

/**
 * The model's confidence if it offered one (clamped to [0, 1]), else the default. An offered value
 * that is not a finite number becomes NaN, which every confidence predicate treats as "escalate".
 */
export function confidenceOf(offered: unknown): number {
  if (offered === undefined || offered === null) return DEFAULT_CONFIDENCE;
  if (typeof offered !== "number" || !Number.isFinite(offered)) return Number.NaN;
  return Math.min(1, Math.max(0, offered));
}

export interface ApprovalFactsInput {
  riskLevel: string;
  /** Categories of every entity the call names (resolved by the shell), and of category arguments. */
  targetCategoryIds: readonly string[];
  /** From the model, when it offered one. */
  confidence?: unknown;
  /** From the trust engine at evaluation time; never from the agent. */
  trustScore: number;
}

export function approvalFacts(input: ApprovalFactsInput): EscalationFacts {
  return {
    confidence: confidenceOf(input.confidence),
    blastRadius: blastRadiusForRisk(input.riskLevel),
    trustScore: input.trustScore,
    affectsMultipleWorkstreams: affectsMultipleWorkstreams(input.targetCategoryIds),
  };
}

export interface ApprovalQuestion {
  toolName: string;
  sideEffectKind: string;
  facts: EscalationFacts;
  /** Tools the human approved with `alwaysApprove` in this thread (exact names). */
  sessionAlwaysApproved: readonly string[];
  /** The run answers untrusted channel input (seed 004 `untrusted_external`): no mutating call of it runs unasked. */
  untrustedInput?: boolean;
}

export type ApprovalVerdict =
  | EscalationVerdict
  | { escalate: false; reason: "trivial_action"; matchedRule: null }
  | { escalate: true; reason: "untrusted_input"; matchedRule: null };

/**
 * Whether a mutating call needs a `decision/tool_approval`. The seed's engine decides, with one reading
 * of its own rule text ("escalate all *non-trivial* actions", "block on decisions, not permissions"):
 * `escalateWhen` rules govern non-trivial actions only — a trivial blast radius in a single workstream
 * passes them. `alwaysEscalate` still applies to every action (orchestrator reviews every write). A run that
 * answers untrusted input escalates every mutating call.
 */
export function approvalVerdict(mode: ControlMode, question: ApprovalQuestion, protocol: EscalationProtocol = DEFAULT_ESCALATION_PROTOCOLS[mode]): ApprovalVerdict {
  // Untrusted input may shape the plan, never invoke a mutating tool on its own: whatever the mode, grants or trust.
  if (question.untrustedInput) return { escalate: true, reason: "untrusted_input", matchedRule: null };
  const verdict = shouldEscalate(
    mode,
    { ...question.facts, toolName: question.toolName, actionCategories: actionCategoriesFor(question.sideEffectKind), sessionAlwaysApproved: question.sessionAlwaysApproved },
    protocol,
  );
  const trivial = question.facts.blastRadius === "trivial" && !question.facts.affectsMultipleWorkstreams;
  if (verdict.escalate && verdict.reason === "rule_matched" && trivial) return { escalate: false, reason: "trivial_action", matchedRule: null };
  return verdict;
}

/** The mode's seed default timeout policy, with the tenant's override for that mode if it set one. */
export function timeoutPolicyFor(mode: ControlMode, overrides: Partial<Record<ControlMode, DecisionTimeoutPolicy>> = {}): DecisionTimeoutPolicy {
  return overrides[mode] ?? DEFAULT_DECISION_TIMEOUT_POLICIES[mode];
}

/** Ticks are wall-clock intervals of `tickMs` since the epoch: the same instant is the same tick everywhere. */
export function tickAt(nowMs: number, tickMs: number): number {
  return Math.floor(nowMs / tickMs);
}

/** How long the saga waits for a human before the policy fires: ticks × tick length; null = no timeout. */
export function decisionWaitMs(policy: DecisionTimeoutPolicy, tickMs: number): number | null {
  return policy.timeoutTicks === null ? null : policy.timeoutTicks * tickMs;
}

/** A tool approval's decision id, derived from the call's operationId: replays and recovery find the same decision. */
export const approvalDecisionId = (operationId: string) => `dec_${H(operationId, "approval").slice(0, 24)}`;
