import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BLAST_RADII,
  CONTROL_MODES,
  DEFAULT_ESCALATION_PROTOCOLS,
  escalationPredicateSchema,
  escalationProtocolSchema,
  evaluatePredicate,
  shouldEscalate,
  type EscalationContext,
  type EscalationFacts,
} from "../../src/core/governance/escalation";

const facts: EscalationFacts = { confidence: 0.9, blastRadius: "small", trustScore: 82, affectsMultipleWorkstreams: false };
const action = (toolName: string, extra: Partial<EscalationContext> = {}): EscalationContext => ({ ...facts, toolName, ...extra });

describe("orchestrator mode (seed 002)", () => {
  it("escalates every write, edit, execute, deploy and delete", () => {
    for (const category of ["write", "edit", "execute", "deploy", "delete"]) {
      expect(shouldEscalate("orchestrator", action("some_tool", { actionCategories: [category] }))).toMatchObject({
        escalate: true,
        reason: "always_escalate",
        matchedEntry: category,
      });
    }
  });

  it("never escalates read and search", () => {
    expect(shouldEscalate("orchestrator", action("list_tasks_in_scope", { actionCategories: ["read"] }))).toMatchObject({
      escalate: false,
      reason: "never_escalate",
    });
  });

  it("lets an unlisted, classified action through because escalateWhen is empty", () => {
    expect(shouldEscalate("orchestrator", action("analyze"))).toEqual({ escalate: false, reason: "no_rule_matched", matchedRule: null });
  });
});

describe("adaptive mode (seed 002, agent at trust 82)", () => {
  it("does not fire the trustScore < 70 rule at 82", () => {
    expect(shouldEscalate("adaptive", action("create_task", { confidence: 0.95, blastRadius: "large" })).escalate).toBe(false);
  });

  it("escalates low confidence with non-trivial blast radius", () => {
    const verdict = shouldEscalate("adaptive", action("create_task", { confidence: 0.7, blastRadius: "medium" }));
    expect(verdict).toMatchObject({ escalate: true, reason: "rule_matched", ruleIndex: 0 });
    expect(verdict.matchedRule?.description).toBe("Low confidence + non-trivial blast radius");
    expect(shouldEscalate("adaptive", action("create_task", { confidence: 0.7, blastRadius: "small" })).escalate).toBe(false);
  });

  it("escalates cross-workstream actions", () => {
    expect(shouldEscalate("adaptive", action("create_task", { affectsMultipleWorkstreams: true }))).toMatchObject({
      escalate: true,
      ruleIndex: 2,
    });
  });

  it("still escalates for an agent that decayed to 50 (the trust < 70 rule fires)", () => {
    const verdict = shouldEscalate("adaptive", action("create_task", { trustScore: 50 }));
    expect(verdict).toMatchObject({ escalate: true, ruleIndex: 1 });
    expect(verdict.matchedRule?.description).toBe("Low-trust agent -- escalate all non-trivial actions");
    expect(shouldEscalate("adaptive", action("create_task", { trustScore: 70 })).escalate).toBe(false);
  });

  it("always escalates delete and deploy", () => {
    expect(shouldEscalate("adaptive", action("drop_everything", { actionCategories: ["delete"] }))).toMatchObject({
      reason: "always_escalate",
    });
  });
});

describe("ecosystem mode (seed 002)", () => {
  it("escalates only delete and deploy among the listed categories", () => {
    expect(shouldEscalate("ecosystem", action("deploy"))).toMatchObject({ escalate: true, reason: "always_escalate" });
    for (const category of ["read", "search", "write", "edit", "execute"]) {
      expect(shouldEscalate("ecosystem", action("t", { actionCategories: [category], confidence: 0.1 })).escalate).toBe(false);
    }
  });

  it("escalates low-confidence unlisted actions", () => {
    expect(shouldEscalate("ecosystem", action("summarize", { confidence: 0.49 }))).toMatchObject({ escalate: true, ruleIndex: 0 });
    expect(shouldEscalate("ecosystem", action("summarize", { confidence: 0.5 })).escalate).toBe(false);
  });
});

describe("fail-safes and overrides", () => {
  it("sends an unclassified action (blast radius unknown) to a human in every mode", () => {
    for (const mode of CONTROL_MODES) {
      const verdict = shouldEscalate(mode, action("mystery_tool", { blastRadius: "unknown" }));
      expect(verdict.escalate).toBe(true);
    }
    expect(shouldEscalate("orchestrator", action("mystery_tool", { blastRadius: "unknown" })).reason).toBe("unknown_blast_radius");
  });

  it("ranks unknown blast radius above large for gte", () => {
    expect(evaluatePredicate({ field: "blastRadius", op: "gte", value: "large" }, { ...facts, blastRadius: "unknown" })).toBe(true);
    expect(evaluatePredicate({ field: "blastRadius", op: "eq", value: "large" }, { ...facts, blastRadius: "unknown" })).toBe(false);
  });

  it("treats a non-finite confidence as matching, never as a silent approval", () => {
    expect(shouldEscalate("ecosystem", action("summarize", { confidence: Number.NaN })).escalate).toBe(true);
  });

  it("honours the session's alwaysApprove grant for that exact tool only", () => {
    const ctx = action("delete_task", { actionCategories: ["delete"], sessionAlwaysApproved: ["delete_task"] });
    expect(shouldEscalate("orchestrator", ctx)).toMatchObject({ escalate: false, reason: "session_always_approved" });
    expect(shouldEscalate("orchestrator", { ...ctx, toolName: "delete_tasks" }).escalate).toBe(true);
  });

  it("uses an agent-level protocol override when given", () => {
    const protocol = { ...DEFAULT_ESCALATION_PROTOCOLS.ecosystem, neverEscalate: [] };
    expect(shouldEscalate("ecosystem", action("t", { actionCategories: ["write"], confidence: 0.1 }), protocol).escalate).toBe(true);
  });
});

describe("predicate engine", () => {
  it("evaluates and/or as every/some", () => {
    const low = { field: "confidence", op: "lt", value: 0.5 } as const;
    const cross = { field: "affectsMultipleWorkstreams", op: "eq", value: true } as const;
    const f = { ...facts, confidence: 0.4 };
    expect(evaluatePredicate({ type: "and", rules: [low, cross] }, f)).toBe(false);
    expect(evaluatePredicate({ type: "or", rules: [low, cross] }, f)).toBe(true);
    expect(evaluatePredicate({ type: "or", rules: [{ type: "and", rules: [low] }, cross] }, f)).toBe(true);
  });

  it("supports every numeric operator at its boundary", () => {
    const at = { ...facts, trustScore: 70 };
    expect(evaluatePredicate({ field: "trustScore", op: "lt", value: 70 }, at)).toBe(false);
    expect(evaluatePredicate({ field: "trustScore", op: "lte", value: 70 }, at)).toBe(true);
    expect(evaluatePredicate({ field: "trustScore", op: "gt", value: 70 }, at)).toBe(false);
    expect(evaluatePredicate({ field: "trustScore", op: "gte", value: 70 }, at)).toBe(true);
  });

  it("accepts the seed's three protocols and rejects malformed predicates", () => {
    for (const mode of CONTROL_MODES) expect(escalationProtocolSchema.parse(DEFAULT_ESCALATION_PROTOCOLS[mode])).toEqual(DEFAULT_ESCALATION_PROTOCOLS[mode]);
    expect(escalationPredicateSchema.safeParse({ type: "and", rules: [] }).success).toBe(false);
    expect(escalationPredicateSchema.safeParse({ field: "confidence", op: "eq", value: 0.5 }).success).toBe(false);
    expect(escalationPredicateSchema.safeParse({ field: "confidence", op: "lt", value: 2 }).success).toBe(false);
    expect(escalationPredicateSchema.safeParse({ field: "blastRadius", op: "gte", value: "huge" }).success).toBe(false);
    expect(escalationPredicateSchema.safeParse({ field: "severity", op: "eq", value: "high" }).success).toBe(false);
    expect(
      escalationPredicateSchema.safeParse({ type: "or", rules: [{ type: "and", rules: [{ field: "trustScore", op: "gte", value: 90 }] }] }).success,
    ).toBe(true);
  });

  it("is monotone for the seed protocols: less confidence, less trust or more blast radius never un-escalates", () => {
    const arbFacts = fc.record({
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
      blastRadius: fc.constantFrom(...BLAST_RADII),
      trustScore: fc.integer({ min: 10, max: 100 }),
      affectsMultipleWorkstreams: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.constantFrom(...CONTROL_MODES), arbFacts, fc.double({ min: 0, max: 1, noNaN: true }), fc.nat(90), fc.constantFrom(...BLAST_RADII), (mode, f, lessConfidence, lessTrust, radius) => {
        const before = shouldEscalate(mode, { ...f, toolName: "t" }).escalate;
        const riskier = {
          ...f,
          confidence: Math.min(f.confidence, lessConfidence),
          trustScore: Math.max(10, f.trustScore - lessTrust),
          blastRadius: BLAST_RADII.indexOf(radius) > BLAST_RADII.indexOf(f.blastRadius) ? radius : f.blastRadius,
        };
        if (before) expect(shouldEscalate(mode, { ...riskier, toolName: "t" }).escalate).toBe(true);
      }),
    );
  });
});
