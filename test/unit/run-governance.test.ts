import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Brake } from "../../src/core/governance/brakes";
import { emptyUsage, type BudgetWindow } from "../../src/core/governance/budget";
import { effectiveBudgetLimits, gateToolCall, haltAtBoundary, UNLIMITED_POLICY, type ToolGateInput } from "../../src/core/governance/run-governance";

const agent = { agentId: "ag_1", kind: "coach" };

function brake(extra: Partial<Brake>): Brake {
  return {
    id: "brk_1",
    scope: { type: "all" },
    behavior: "pause",
    reason: "review",
    initiatedBy: "key:1",
    createdAtMs: 1_000,
    releaseCondition: { type: "manual" },
    releasedAtMs: null,
    releasedBy: null,
    ...extra,
  };
}

const window = (extra: Partial<BudgetWindow> = {}): BudgetWindow => ({ dayKey: "2026-01-01", usage: emptyUsage(), toolCallsByTool: {}, ...extra });

function gate(extra: Partial<ToolGateInput> = {}) {
  return gateToolCall({
    agent,
    toolName: "create_task",
    mutating: true,
    brakes: [],
    nowMs: 5_000,
    window: window(),
    limits: {},
    policy: UNLIMITED_POLICY,
    defaultRatePerMinute: 60,
    rateState: null,
    ...extra,
  });
}

describe("effectiveBudgetLimits", () => {
  it("takes the agent's limit per dimension over the tenant's, and leaves unset dimensions unlimited", () => {
    expect(effectiveBudgetLimits({ tokens: 10 }, { tokens: 100, toolCalls: 5 })).toEqual({ tokens: 10, toolCalls: 5 });
    expect(effectiveBudgetLimits(null, {})).toEqual({});
    expect(effectiveBudgetLimits({ costMicroUsd: 0 }, { costMicroUsd: 9 })).toEqual({ costMicroUsd: 0 });
  });
});

describe("haltAtBoundary", () => {
  const base = { agent, brakes: [] as Brake[], nowMs: 5_000, usage: emptyUsage(), limits: {} };

  it("skips a wake that never ran under any agent-wide brake", () => {
    for (const behavior of ["pause", "kill"] as const) {
      const halt = haltAtBoundary({ ...base, phase: "admission", brakes: [brake({ behavior })] });
      expect(halt).toMatchObject({ status: "skipped_sleeping", code: "brake_engaged", gate: "brake", detail: { brakeId: "brk_1", behaviour: behavior } });
    }
  });

  it("settles an in-flight run: pause → skipped_sleeping/brake_paused, kill → failed_terminal/brake_killed (kill wins)", () => {
    expect(haltAtBoundary({ ...base, phase: "step", brakes: [brake({ scope: { type: "agent", agentId: "ag_1" } })] })).toMatchObject({ status: "skipped_sleeping", code: "brake_paused" });
    const both = [brake({ id: "p" }), brake({ id: "k", behavior: "kill", scope: { type: "kind", kind: "coach" } })];
    expect(haltAtBoundary({ ...base, phase: "step", brakes: both })).toMatchObject({ status: "failed_terminal", code: "brake_killed", detail: { brakeId: "k" } });
  });

  it("ignores tool brakes, other agents' brakes, released and expired brakes", () => {
    const brakes = [
      brake({ scope: { type: "tool", toolName: "create_task" } }),
      brake({ scope: { type: "agent", agentId: "ag_2" } }),
      brake({ scope: { type: "kind", kind: "planner" } }),
      brake({ releasedAtMs: 2_000, releasedBy: "key:1" }),
      brake({ releaseCondition: { type: "timer", releaseAfterMs: 3_000 } }),
    ];
    expect(haltAtBoundary({ ...base, phase: "step", brakes })).toBeNull();
  });

  it("fails an in-flight run once any budget dimension is spent, but never refuses admission for budget", () => {
    const usage = { ...emptyUsage(), tokens: 100 };
    expect(haltAtBoundary({ ...base, phase: "step", usage, limits: { tokens: 100 } })).toMatchObject({ status: "failed_terminal", code: "budget_exceeded", detail: { dimension: "tokens", used: 100, limit: 100 } });
    expect(haltAtBoundary({ ...base, phase: "step", usage, limits: { tokens: 101 } })).toBeNull();
    expect(haltAtBoundary({ ...base, phase: "admission", usage, limits: { tokens: 1 } })).toBeNull();
  });
});

describe("gateToolCall", () => {
  it("admits a call when nothing limits it and consumes one rate unit", () => {
    const verdict = gate();
    expect(verdict.admit).toBe(true);
    if (verdict.admit) expect(verdict.nextRateState.count).toBe(1);
  });

  it("under pause blocks mutating tools only; under kill blocks every tool; a tool brake blocks that tool either way", () => {
    const pause = [brake({})];
    expect(gate({ brakes: pause })).toMatchObject({ admit: false, code: "brake_engaged", gate: "brake" });
    expect(gate({ brakes: pause, mutating: false, toolName: "list_tasks_in_scope" }).admit).toBe(true);
    expect(gate({ brakes: [brake({ behavior: "kill" })], mutating: false })).toMatchObject({ admit: false, code: "brake_engaged" });
    const toolBrake = [brake({ scope: { type: "tool", toolName: "list_tasks_in_scope" } })];
    expect(gate({ brakes: toolBrake, mutating: false, toolName: "list_tasks_in_scope" })).toMatchObject({ admit: false, code: "brake_engaged" });
    expect(gate({ brakes: toolBrake }).admit).toBe(true);
  });

  it("checks in a fixed order: brake, budget, quota, rate limit", () => {
    const everything = {
      brakes: [brake({})],
      window: window({ usage: { ...emptyUsage(), toolCalls: 3 }, toolCallsByTool: { create_task: 3 } }),
      limits: { toolCalls: 3 },
      policy: { budgets: {}, toolQuotas: { create_task: 3 }, toolRateLimits: { create_task: 1 } },
      rateState: { windowStartMs: 0, count: 1 },
    };
    expect(gate(everything)).toMatchObject({ code: "brake_engaged" });
    expect(gate({ ...everything, brakes: [] })).toMatchObject({ code: "budget_exceeded", detail: { dimension: "toolCalls" } });
    expect(gate({ ...everything, brakes: [], limits: {} })).toMatchObject({ code: "tool_quota_exceeded", detail: { used: 3, limit: 3 } });
    expect(gate({ ...everything, brakes: [], limits: {}, policy: { ...everything.policy, toolQuotas: {} } })).toMatchObject({ code: "rate_limited", retryable: true });
  });

  it("refuses tools once another budget dimension is spent", () => {
    expect(gate({ window: window({ usage: { ...emptyUsage(), costMicroUsd: 50 } }), limits: { costMicroUsd: 50 } })).toMatchObject({ code: "budget_exceeded", detail: { dimension: "costMicroUsd" } });
  });

  it("a quota of n admits exactly n calls a day", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), (quota) => {
        let calls = 0;
        let admitted = 0;
        for (let i = 0; i < quota + 5; i++) {
          const verdict = gate({ window: window({ toolCallsByTool: { create_task: calls } }), policy: { budgets: {}, toolQuotas: { create_task: quota }, toolRateLimits: {} }, defaultRatePerMinute: 1_000 });
          if (verdict.admit) {
            admitted++;
            calls++;
          }
        }
        expect(admitted).toBe(quota);
      }),
    );
  });

  it("uses the policy's per-minute limit over the default, in windows aligned to the minute", () => {
    let state = null;
    const outcomes: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const verdict = gate({ nowMs: 120_000 + i, rateState: state, policy: { budgets: {}, toolQuotas: {}, toolRateLimits: { create_task: 2 } } });
      outcomes.push(verdict.admit);
      if (verdict.admit) state = verdict.nextRateState as never;
    }
    expect(outcomes).toEqual([true, true, false]);
    expect(gate({ nowMs: 180_000, rateState: state, policy: { budgets: {}, toolQuotas: {}, toolRateLimits: { create_task: 2 } } }).admit).toBe(true);
  });
});
