import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CONFIDENCE,
  actionCategoriesFor,
  affectsMultipleWorkstreams,
  approvalFacts,
  approvalVerdict,
  blastRadiusForRisk,
  confidenceOf,
  decisionWaitMs,
  severityForRisk,
  tickAt,
  timeoutPolicyFor,
  type ApprovalQuestion,
} from "../../src/core/governance/approval-facts";
import { DEFAULT_DECISION_TIMEOUT_POLICIES } from "../../src/core/governance/decision";

const question = (riskLevel: string, extra: { trustScore?: number; categories?: string[]; confidence?: unknown; granted?: string[]; sideEffectKind?: string } = {}): ApprovalQuestion => ({
  toolName: "create_task",
  sideEffectKind: extra.sideEffectKind ?? "journal_write",
  facts: approvalFacts({ riskLevel, targetCategoryIds: extra.categories ?? ["gym"], confidence: extra.confidence, trustScore: extra.trustScore ?? 50 }),
  sessionAlwaysApproved: extra.granted ?? [],
});

describe("facts mapping", () => {
  it("maps riskLevel to blast radius and severity, failing safe for unknown levels", () => {
    expect(["low", "medium", "high", "weird"].map(blastRadiusForRisk)).toEqual(["trivial", "medium", "large", "unknown"]);
    expect(["low", "medium", "high", "weird"].map(severityForRisk)).toEqual(["low", "medium", "high", "high"]);
  });

  it("names the seed action categories from the side-effect kind", () => {
    expect(actionCategoriesFor("none")).toEqual(["read"]);
    expect(actionCategoriesFor("journal_write")).toEqual(["write"]);
    expect(actionCategoriesFor("external_http")).toEqual(["execute"]);
  });

  it("affects multiple workstreams iff the targets span more than one category", () => {
    expect(affectsMultipleWorkstreams([])).toBe(false);
    expect(affectsMultipleWorkstreams(["a", "a"])).toBe(false);
    expect(affectsMultipleWorkstreams(["a", "b"])).toBe(true);
  });

  it("uses the model's confidence when offered (clamped), the default otherwise, NaN for garbage", () => {
    expect(confidenceOf(undefined)).toBe(DEFAULT_CONFIDENCE);
    expect(confidenceOf(null)).toBe(DEFAULT_CONFIDENCE);
    expect(confidenceOf(0.3)).toBe(0.3);
    expect(confidenceOf(7)).toBe(1);
    expect(confidenceOf(-1)).toBe(0);
    expect(confidenceOf("high")).toBeNaN();
  });
});

describe("which calls need approval", () => {
  it("adaptive: a new agent (trust 50) needs approval for non-trivial calls only", () => {
    expect(approvalVerdict("adaptive", question("medium"))).toMatchObject({ escalate: true, reason: "rule_matched", ruleIndex: 1 });
    expect(approvalVerdict("adaptive", question("high"))).toMatchObject({ escalate: true });
    expect(approvalVerdict("adaptive", question("low"))).toEqual({ escalate: false, reason: "trivial_action", matchedRule: null });
  });

  it("adaptive: a trusted agent passes medium calls unless confidence is low or workstreams cross", () => {
    expect(approvalVerdict("adaptive", question("medium", { trustScore: 82 }))).toMatchObject({ escalate: false, reason: "no_rule_matched" });
    expect(approvalVerdict("adaptive", question("medium", { trustScore: 82, confidence: 0.5 }))).toMatchObject({ escalate: true, ruleIndex: 0 });
    expect(approvalVerdict("adaptive", question("low", { trustScore: 82, categories: ["gym", "work"] }))).toMatchObject({ escalate: true, ruleIndex: 2 });
  });

  it("orchestrator: every write needs approval, even a trivial one; reads never", () => {
    expect(approvalVerdict("orchestrator", question("low", { trustScore: 100 }))).toMatchObject({ escalate: true, reason: "always_escalate", matchedEntry: "write" });
    expect(approvalVerdict("orchestrator", question("low", { sideEffectKind: "none" }))).toMatchObject({ escalate: false, reason: "never_escalate" });
  });

  it("ecosystem: writes proceed; unknown-risk HTTP calls too, since execute is never escalated", () => {
    expect(approvalVerdict("ecosystem", question("high"))).toMatchObject({ escalate: false, reason: "never_escalate" });
    expect(approvalVerdict("ecosystem", question("weird", { sideEffectKind: "external_http" }))).toMatchObject({ escalate: false });
  });

  it("a thread's alwaysApprove grant skips approval for that exact tool", () => {
    expect(approvalVerdict("orchestrator", question("high", { granted: ["create_task"] }))).toMatchObject({ escalate: false, reason: "session_always_approved" });
    expect(approvalVerdict("orchestrator", question("high", { granted: ["create_tasks"] }))).toMatchObject({ escalate: true });
  });

  it("property: a trivial single-workstream call never escalates by rule, in any mode", () => {
    fc.assert(
      fc.property(fc.constantFrom("orchestrator", "adaptive", "ecosystem" as const), fc.integer({ min: 10, max: 100 }), fc.double({ min: 0, max: 1, noNaN: true }), (mode, trustScore, confidence) => {
        const verdict = approvalVerdict(mode, question("low", { trustScore, confidence }));
        expect(verdict.escalate && verdict.reason === "rule_matched").toBe(false);
      }),
    );
  });

  it("property: higher trust never turns an auto-approved adaptive call into an escalation", () => {
    fc.assert(
      fc.property(fc.constantFrom("low", "medium", "high"), fc.integer({ min: 10, max: 99 }), fc.integer({ min: 1, max: 90 }), (risk, trust, bump) => {
        const low = approvalVerdict("adaptive", question(risk, { trustScore: trust }));
        const high = approvalVerdict("adaptive", question(risk, { trustScore: Math.min(100, trust + bump) }));
        if (!low.escalate) expect(high.escalate).toBe(false);
      }),
    );
  });
});

describe("timeouts", () => {
  it("uses the seed default per mode unless the tenant overrides that mode", () => {
    expect(timeoutPolicyFor("adaptive")).toEqual(DEFAULT_DECISION_TIMEOUT_POLICIES.adaptive);
    const override = { timeoutTicks: 3, onTimeout: "cancel" as const };
    expect(timeoutPolicyFor("adaptive", { adaptive: override })).toBe(override);
    expect(timeoutPolicyFor("ecosystem", { adaptive: override })).toEqual(DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem);
  });

  it("waits ticks × tick length, or forever when timeoutTicks is null", () => {
    expect(decisionWaitMs({ timeoutTicks: 50, onTimeout: "escalate" }, 60_000)).toBe(3_000_000);
    expect(decisionWaitMs(DEFAULT_DECISION_TIMEOUT_POLICIES.orchestrator, 60_000)).toBeNull();
    expect(tickAt(125_000, 60_000)).toBe(2);
  });
});
