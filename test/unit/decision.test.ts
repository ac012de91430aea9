import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_DECISION_TIMEOUT_POLICIES,
  decisionTimeoutPolicySchema,
  onDecisionTick,
  openDecision,
  resolutionSchema,
  resolveDecision,
  resumeDecision,
  SEVERITIES,
  stampDueByTick,
  suspendDecision,
  trustOutcomeForResolution,
  validateResolution,
  type Decision,
  type DecisionTimeoutPolicy,
  type OptionDecision,
  type ToolApprovalDecision,
} from "../../src/core/governance/decision";

const NO_TIMEOUT: DecisionTimeoutPolicy = { timeoutTicks: null, onTimeout: "escalate" };

function toolApproval(extra: Partial<ToolApprovalDecision> = {}): ToolApprovalDecision {
  const base = openDecision(
    { type: "decision/tool_approval", id: "d1", agentId: "a1", toolName: "create_task", toolArgs: { title: "x" }, severity: "medium", confidence: 0.7, blastRadius: "small", requiresRationale: false },
    NO_TIMEOUT,
    0,
  ) as ToolApprovalDecision;
  return { ...base, ...extra };
}

function optionDecision(extra: Partial<OptionDecision> = {}): OptionDecision {
  const base = openDecision(
    {
      type: "decision/option",
      id: "d2",
      agentId: "a1",
      title: "Which plan?",
      summary: "Pick one",
      options: [
        { id: "A", label: "Plan A", description: "" },
        { id: "B", label: "Plan B", description: "" },
      ],
      recommendedOptionId: "A",
      severity: "low",
      confidence: 0.6,
      blastRadius: "medium",
      requiresRationale: false,
    },
    NO_TIMEOUT,
    0,
  ) as OptionDecision;
  return { ...base, ...extra };
}

describe("validateResolution", () => {
  it("accepts approve, reject and modify for tool approvals", () => {
    expect(validateResolution(toolApproval(), { resolutionType: "approve", alwaysApprove: true }).ok).toBe(true);
    expect(validateResolution(toolApproval(), { resolutionType: "reject", rationale: "no" }).ok).toBe(true);
    expect(validateResolution(toolApproval(), { resolutionType: "modify", modifiedArgs: { title: "y" } }).ok).toBe(true);
  });

  it("allows modify only for tool approvals, and only with modifiedArgs", () => {
    expect(validateResolution(optionDecision(), { resolutionType: "modify", modifiedArgs: {} })).toMatchObject({ ok: false, code: "invalid_resolution", field: "resolutionType" });
    expect(validateResolution(toolApproval(), { resolutionType: "modify" })).toMatchObject({ ok: false, field: "modifiedArgs" });
    expect(validateResolution(toolApproval(), { resolutionType: "approve", modifiedArgs: { a: 1 } })).toMatchObject({ ok: false, field: "modifiedArgs" });
  });

  it("requires choose_option to name an option of this decision", () => {
    expect(validateResolution(optionDecision(), { resolutionType: "choose_option", chosenOptionId: "B" }).ok).toBe(true);
    expect(validateResolution(optionDecision(), { resolutionType: "choose_option", chosenOptionId: "Z" })).toMatchObject({ ok: false, field: "chosenOptionId" });
    expect(validateResolution(optionDecision(), { resolutionType: "choose_option" })).toMatchObject({ ok: false, field: "chosenOptionId" });
    expect(validateResolution(toolApproval(), { resolutionType: "choose_option", chosenOptionId: "A" })).toMatchObject({ ok: false, field: "resolutionType" });
  });

  it("refuses approve on option decisions and alwaysApprove outside approve", () => {
    expect(validateResolution(optionDecision(), { resolutionType: "approve" })).toMatchObject({ ok: false, field: "resolutionType" });
    expect(validateResolution(toolApproval(), { resolutionType: "reject", alwaysApprove: true })).toMatchObject({ ok: false, field: "alwaysApprove" });
    expect(validateResolution(toolApproval(), { resolutionType: "reject", alwaysApprove: false }).ok).toBe(true);
  });

  it("requires a rationale when the decision asks for one", () => {
    const decision = optionDecision({ requiresRationale: true });
    expect(validateResolution(decision, { resolutionType: "choose_option", chosenOptionId: "A", rationale: "  " })).toMatchObject({ ok: false, field: "rationale" });
    expect(validateResolution(decision, { resolutionType: "choose_option", chosenOptionId: "A", rationale: "cheaper" }).ok).toBe(true);
  });

  it("only resolves pending decisions", () => {
    for (const status of ["resolved", "suspended", "cancelled"] as const) {
      expect(validateResolution(toolApproval({ status }), { resolutionType: "approve" })).toEqual({ ok: false, code: "decision_not_pending", status });
    }
  });

  it("validates the request body strictly", () => {
    expect(resolutionSchema.safeParse({ resolutionType: "approve", alwaysApprove: true, rationale: "ok" }).success).toBe(true);
    expect(resolutionSchema.safeParse({ resolutionType: "maybe" }).success).toBe(false);
    expect(resolutionSchema.safeParse({ resolutionType: "approve", extra: 1 }).success).toBe(false);
  });
});

describe("trust outcome of a resolution (seed 002 delta table triggers)", () => {
  it("maps each resolution to its row", () => {
    expect(trustOutcomeForResolution(toolApproval(), { resolutionType: "approve" })).toBe("human_approves_tool_call");
    expect(trustOutcomeForResolution(toolApproval(), { resolutionType: "approve", alwaysApprove: true })).toBe("human_approves_always");
    expect(trustOutcomeForResolution(toolApproval(), { resolutionType: "modify", modifiedArgs: {} })).toBe("human_modifies_tool_args");
    expect(trustOutcomeForResolution(toolApproval(), { resolutionType: "reject" })).toBe("human_rejects_tool_call");
    expect(trustOutcomeForResolution(optionDecision(), { resolutionType: "choose_option", chosenOptionId: "A" })).toBe("human_approves_recommended_option");
    expect(trustOutcomeForResolution(optionDecision(), { resolutionType: "choose_option", chosenOptionId: "B" })).toBe("human_picks_non_recommended");
  });

  it("has no outcome without a recommendation or for a rejected option decision", () => {
    const { recommendedOptionId: _, ...unrecommended } = optionDecision();
    expect(trustOutcomeForResolution(unrecommended, { resolutionType: "choose_option", chosenOptionId: "A" })).toBeNull();
    expect(trustOutcomeForResolution(optionDecision(), { resolutionType: "reject" })).toBeNull();
  });

  it("resolveDecision marks the decision resolved by a human", () => {
    const result = resolveDecision(toolApproval(), { resolutionType: "approve" });
    expect(result).toMatchObject({ ok: true, trustOutcome: "human_approves_tool_call", decision: { status: "resolved", resolvedBy: "human" } });
  });
});

describe("timeout policy (seed 002 'Decision timeout policy')", () => {
  it("has the seed's per-mode defaults", () => {
    expect(DEFAULT_DECISION_TIMEOUT_POLICIES.orchestrator.timeoutTicks).toBeNull();
    expect(DEFAULT_DECISION_TIMEOUT_POLICIES.adaptive).toEqual({ timeoutTicks: 50, onTimeout: "escalate" });
    expect(DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem).toEqual({ timeoutTicks: 20, onTimeout: "auto_recommend" });
    for (const policy of Object.values(DEFAULT_DECISION_TIMEOUT_POLICIES)) expect(decisionTimeoutPolicySchema.parse(policy)).toEqual(policy);
  });

  it("stamps dueByTick at ingestion unless the event carries one (null = never)", () => {
    expect(stampDueByTick(100, DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem)).toBe(120);
    expect(stampDueByTick(100, DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem, 105)).toBe(105);
    expect(stampDueByTick(100, DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem, null)).toBeNull();
    expect(stampDueByTick(100, DEFAULT_DECISION_TIMEOUT_POLICIES.orchestrator)).toBeNull();
  });

  it("never fires in orchestrator mode: the human must respond", () => {
    const decision = toolApproval();
    expect(onDecisionTick(decision, DEFAULT_DECISION_TIMEOUT_POLICIES.orchestrator, 1_000_000)).toEqual({ action: "none", decision });
  });

  it("fires when currentTick >= dueByTick, not before", () => {
    const policy = DEFAULT_DECISION_TIMEOUT_POLICIES.ecosystem;
    const decision = toolApproval({ dueByTick: 20 });
    expect(onDecisionTick(decision, policy, 19).action).toBe("none");
    expect(onDecisionTick(decision, policy, 20).action).toBe("auto_resolved");
  });

  it("auto_recommend approves a tool call or picks the recommended option, with a zero trust outcome", () => {
    const policy: DecisionTimeoutPolicy = { timeoutTicks: 20, onTimeout: "auto_recommend" };
    expect(onDecisionTick(toolApproval({ dueByTick: 20 }), policy, 20)).toMatchObject({
      action: "auto_resolved",
      resolution: { resolutionType: "approve" },
      trustOutcome: "decision_auto_resolved",
      decision: { status: "resolved", resolvedBy: "timeout" },
    });
    expect(onDecisionTick(optionDecision({ dueByTick: 20 }), policy, 20)).toMatchObject({
      resolution: { resolutionType: "choose_option", chosenOptionId: "A" },
    });
  });

  it("auto_recommend without a recommendation falls through to escalate", () => {
    const { recommendedOptionId: _, ...unrecommended } = optionDecision({ dueByTick: 20 });
    expect(onDecisionTick(unrecommended, { timeoutTicks: 20, onTimeout: "auto_recommend" }, 20)).toMatchObject({
      action: "escalated",
      path: ["auto_recommend", "escalate"],
    });
  });

  it("escalate raises severity one level, badges it and re-arms; at critical it falls through to cancel", () => {
    const policy: DecisionTimeoutPolicy = { timeoutTicks: 50, onTimeout: "escalate" };
    let decision: Decision = toolApproval({ severity: "warning", dueByTick: 50 });
    const seen: string[] = [];
    let tick = 50;
    for (;;) {
      const result = onDecisionTick(decision, policy, tick);
      if (result.action === "escalated") {
        seen.push(result.to);
        expect(result.decision).toMatchObject({ timedOut: true, dueByTick: tick + 50 });
      } else {
        expect(result).toMatchObject({ action: "cancelled", toolCallRejected: true, path: ["escalate", "cancel"] });
        break;
      }
      decision = result.decision;
      tick += 50;
    }
    expect(seen).toEqual(SEVERITIES.slice(1));
  });

  it("cancel cancels; only tool approvals count as a rejected tool call", () => {
    const policy: DecisionTimeoutPolicy = { timeoutTicks: 5, onTimeout: "cancel" };
    expect(onDecisionTick(optionDecision({ dueByTick: 5 }), policy, 5)).toMatchObject({ action: "cancelled", toolCallRejected: false, decision: { status: "cancelled" } });
  });

  it("extend resets the timeout maxExtensions times (default 2), then escalates", () => {
    const policy: DecisionTimeoutPolicy = { timeoutTicks: 10, onTimeout: "extend" };
    let decision: Decision = toolApproval({ dueByTick: 10 });
    const first = onDecisionTick(decision, policy, 10);
    expect(first).toMatchObject({ action: "extended", decision: { dueByTick: 20, extensionsUsed: 1 } });
    decision = first.decision;
    const second = onDecisionTick(decision, policy, 20);
    expect(second).toMatchObject({ action: "extended", decision: { dueByTick: 30, extensionsUsed: 2 } });
    expect(onDecisionTick(second.decision, policy, 30)).toMatchObject({ action: "escalated", from: "medium", to: "high", path: ["extend", "escalate"] });
    expect(onDecisionTick(toolApproval({ dueByTick: 10 }), { ...policy, maxExtensions: 0 }, 10).action).toBe("escalated");
  });

  it("ignores resolved, cancelled and suspended decisions", () => {
    const policy: DecisionTimeoutPolicy = { timeoutTicks: 1, onTimeout: "cancel" };
    for (const status of ["resolved", "cancelled", "suspended"] as const) {
      expect(onDecisionTick(toolApproval({ status, dueByTick: 0 }), policy, 100).action).toBe("none");
    }
  });

  it("suspends a braked agent's pending decisions and re-arms them on resume", () => {
    const policy = DEFAULT_DECISION_TIMEOUT_POLICIES.adaptive;
    const suspended = suspendDecision(toolApproval({ dueByTick: 50 }));
    expect(suspended.status).toBe("suspended");
    expect(resumeDecision(suspended, policy, 400)).toMatchObject({ status: "pending", dueByTick: 450 });
    expect(suspendDecision(toolApproval({ status: "resolved" })).status).toBe("resolved");
  });

  it("always terminates: any policy reaches a terminal state within a bounded number of firings", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("auto_recommend", "escalate", "cancel", "extend" as const),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom(...SEVERITIES),
        (onTimeout, timeoutTicks, maxExtensions, severity) => {
          const policy: DecisionTimeoutPolicy = { timeoutTicks, onTimeout, maxExtensions };
          let decision: Decision = toolApproval({ severity, dueByTick: timeoutTicks });
          let firings = 0;
          while (decision.status === "pending") {
            decision = onDecisionTick(decision, policy, decision.dueByTick!).decision;
            firings++;
            expect(firings).toBeLessThanOrEqual(maxExtensions + SEVERITIES.length + 1);
          }
        },
      ),
    );
  });
});
