import { z } from "zod";

/**
 * Control modes and the escalation engine (seed 002 "Control Mode Enforcement", `EscalationProtocol`,
 * `EscalationPredicate`). It decides whether an agent's action needs a human (a `decision/tool_approval`)
 * or may proceed. It runs in the backend only; trust scores never reach the agent.
 */

/** Seed 002 `ControlMode`. */
export const CONTROL_MODES = ["orchestrator", "adaptive", "ecosystem"] as const;
export type ControlMode = (typeof CONTROL_MODES)[number];

/** Seed 002 `BlastRadius`. `unknown` is what an unclassified tool gets ("fail-safe to human review"). */
export const BLAST_RADII = ["trivial", "small", "medium", "large", "unknown"] as const;
export type BlastRadius = (typeof BLAST_RADII)[number];

export type NumericOp = "lt" | "gt" | "lte" | "gte";

/** Seed 002 `EscalationPredicate`, verbatim. */
export type EscalationPredicate =
  | { field: "confidence"; op: NumericOp; value: number }
  | { field: "blastRadius"; op: "eq" | "gte"; value: BlastRadius }
  | { field: "trustScore"; op: NumericOp; value: number }
  | { field: "affectsMultipleWorkstreams"; op: "eq"; value: boolean }
  | { type: "and"; rules: EscalationPredicate[] }
  | { type: "or"; rules: EscalationPredicate[] };

export interface EscalationRule {
  predicate: EscalationPredicate;
  description: string;
}

/** Seed 002 `EscalationProtocol`. List entries match a tool name or one of its action categories. */
export interface EscalationProtocol {
  alwaysEscalate: string[];
  escalateWhen: EscalationRule[];
  neverEscalate: string[];
}

const numericOp = z.enum(["lt", "gt", "lte", "gte"]);

/** Validates a predicate where it enters (policy API, agent config). Empty `and`/`or` lists are refused. */
export const escalationPredicateSchema: z.ZodType<EscalationPredicate> = z.lazy(() =>
  z.union([
    z.object({ field: z.literal("confidence"), op: numericOp, value: z.number().min(0).max(1) }).strict(),
    z.object({ field: z.literal("blastRadius"), op: z.enum(["eq", "gte"]), value: z.enum(BLAST_RADII) }).strict(),
    z.object({ field: z.literal("trustScore"), op: numericOp, value: z.number().min(0).max(100) }).strict(),
    z.object({ field: z.literal("affectsMultipleWorkstreams"), op: z.literal("eq"), value: z.boolean() }).strict(),
    z.object({ type: z.literal("and"), rules: z.array(escalationPredicateSchema).min(1) }).strict(),
    z.object({ type: z.literal("or"), rules: z.array(escalationPredicateSchema).min(1) }).strict(),
  ]),
);

export const escalationRuleSchema = z.object({ predicate: escalationPredicateSchema, description: z.string().min(1) }).strict();

export const escalationProtocolSchema = z
  .object({
    alwaysEscalate: z.array(z.string().min(1)),
    escalateWhen: z.array(escalationRuleSchema),
    neverEscalate: z.array(z.string().min(1)),
  })
  .strict();

/** Seed 002 "Orchestrator / Ecosystem / Adaptive Mode" briefs, verbatim. */
export const DEFAULT_ESCALATION_PROTOCOLS: Readonly<Record<ControlMode, EscalationProtocol>> = {
  orchestrator: {
    alwaysEscalate: ["write", "edit", "execute", "deploy", "delete"],
    escalateWhen: [],
    neverEscalate: ["read", "search"],
  },
  adaptive: {
    alwaysEscalate: ["delete", "deploy"],
    escalateWhen: [
      {
        predicate: {
          type: "and",
          rules: [
            { field: "confidence", op: "lt", value: 0.8 },
            { field: "blastRadius", op: "gte", value: "medium" },
          ],
        },
        description: "Low confidence + non-trivial blast radius",
      },
      {
        predicate: { field: "trustScore", op: "lt", value: 70 },
        description: "Low-trust agent -- escalate all non-trivial actions",
      },
      {
        predicate: { field: "affectsMultipleWorkstreams", op: "eq", value: true },
        description: "Cross-workstream actions need human sign-off",
      },
    ],
    neverEscalate: [],
  },
  ecosystem: {
    alwaysEscalate: ["delete", "deploy"],
    escalateWhen: [
      {
        predicate: { field: "confidence", op: "lt", value: 0.5 },
        description: "Low confidence decisions need human review",
      },
    ],
    neverEscalate: ["read", "search", "write", "edit", "execute"],
  },
};

/** The facts predicates read. `trustScore` comes from the trust engine at evaluation time, never from the agent. */
export interface EscalationFacts {
  confidence: number;
  blastRadius: BlastRadius;
  trustScore: number;
  affectsMultipleWorkstreams: boolean;
}

/** One proposed action: the tool, its action categories (`read`, `write`, `delete`, …) and the facts. */
export interface EscalationContext extends EscalationFacts {
  toolName: string;
  actionCategories?: readonly string[];
  /** Tools the human approved with `alwaysApprove` in this session (exact names, seed 002). */
  sessionAlwaysApproved?: ReadonlyArray<string>;
}

export type EscalationVerdict =
  | { escalate: true; reason: "always_escalate"; matchedRule: null; matchedEntry: string }
  | { escalate: true; reason: "rule_matched"; matchedRule: EscalationRule; ruleIndex: number }
  | { escalate: true; reason: "unknown_blast_radius"; matchedRule: null }
  | { escalate: false; reason: "session_always_approved"; matchedRule: null; matchedEntry: string }
  | { escalate: false; reason: "never_escalate"; matchedRule: null; matchedEntry: string }
  | { escalate: false; reason: "no_rule_matched"; matchedRule: null };

// `unknown` ranks above `large` so that `gte` comparisons fail safe to human review.
const BLAST_RANK: Record<BlastRadius, number> = { trivial: 0, small: 1, medium: 2, large: 3, unknown: 4 };

function compare(actual: number, op: NumericOp, expected: number): boolean {
  // A missing or corrupt number must not silently auto-approve: every predicate is an escalation trigger.
  if (!Number.isFinite(actual)) return true;
  switch (op) {
    case "lt":
      return actual < expected;
    case "gt":
      return actual > expected;
    case "lte":
      return actual <= expected;
    case "gte":
      return actual >= expected;
  }
}

/** Evaluates one predicate tree against the facts. */
export function evaluatePredicate(predicate: EscalationPredicate, facts: EscalationFacts): boolean {
  if ("type" in predicate) {
    return predicate.type === "and"
      ? predicate.rules.every((rule) => evaluatePredicate(rule, facts))
      : predicate.rules.some((rule) => evaluatePredicate(rule, facts));
  }
  switch (predicate.field) {
    case "confidence":
      return compare(facts.confidence, predicate.op, predicate.value);
    case "trustScore":
      return compare(facts.trustScore, predicate.op, predicate.value);
    case "blastRadius":
      return predicate.op === "eq"
        ? facts.blastRadius === predicate.value
        : BLAST_RANK[facts.blastRadius] >= BLAST_RANK[predicate.value];
    case "affectsMultipleWorkstreams":
      return facts.affectsMultipleWorkstreams === predicate.value;
  }
}

function firstMatch(list: readonly string[], names: readonly string[]): string | undefined {
  const wanted = new Set(names.map((name) => name.toLowerCase()));
  return list.find((entry) => wanted.has(entry.toLowerCase()));
}

/**
 * Decides whether an action needs human approval under a control mode. Order: the session's
 * `alwaysApprove` grants → `alwaysEscalate` → `neverEscalate` → `escalateWhen` (first match) →
 * unknown blast radius fails safe → proceed. Pass `protocol` for an agent-level override;
 * otherwise the mode's seed protocol applies (the project-level mode, even if the agent's brief is stale).
 */
export function shouldEscalate(
  mode: ControlMode,
  context: EscalationContext,
  protocol: EscalationProtocol = DEFAULT_ESCALATION_PROTOCOLS[mode],
): EscalationVerdict {
  const granted = context.sessionAlwaysApproved?.includes(context.toolName) ? context.toolName : undefined;
  if (granted !== undefined) return { escalate: false, reason: "session_always_approved", matchedRule: null, matchedEntry: granted };

  const names = [context.toolName, ...(context.actionCategories ?? [])];
  const always = firstMatch(protocol.alwaysEscalate, names);
  if (always !== undefined) return { escalate: true, reason: "always_escalate", matchedRule: null, matchedEntry: always };
  const never = firstMatch(protocol.neverEscalate, names);
  if (never !== undefined) return { escalate: false, reason: "never_escalate", matchedRule: null, matchedEntry: never };

  const ruleIndex = protocol.escalateWhen.findIndex((rule) => evaluatePredicate(rule.predicate, context));
  const rule = protocol.escalateWhen[ruleIndex];
  if (rule !== undefined) return { escalate: true, reason: "rule_matched", matchedRule: rule, ruleIndex };

  if (context.blastRadius === "unknown") return { escalate: true, reason: "unknown_blast_radius", matchedRule: null };
  return { escalate: false, reason: "no_rule_matched", matchedRule: null };
}
