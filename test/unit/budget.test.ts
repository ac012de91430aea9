import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addUsage,
  budgetLimitsSchema,
  checkBudget,
  checkToolQuota,
  currentBudgetWindow,
  dayKey,
  emptyUsage,
  isValidTimeZone,
  nextDayStartMs,
} from "../../src/core/governance/budget";

const utc = (iso: string) => Date.parse(iso);

describe("dayKey in the tenant's time zone", () => {
  it("uses the local calendar day, not UTC", () => {
    const t = utc("2026-03-08T07:30:00Z");
    expect(dayKey(t, "UTC")).toBe("2026-03-08");
    expect(dayKey(t, "America/Los_Angeles")).toBe("2026-03-07");
    expect(dayKey(utc("2026-03-07T18:20:00Z"), "Asia/Kathmandu")).toBe("2026-03-08");
    expect(dayKey(utc("2026-12-31T11:00:00Z"), "Pacific/Kiritimati")).toBe("2027-01-01");
  });

  it("rejects unknown zones", () => {
    expect(isValidTimeZone("Europe/Paris")).toBe(true);
    expect(isValidTimeZone("Mars/Olympus")).toBe(false);
    expect(() => dayKey(0, "Mars/Olympus")).toThrow(RangeError);
  });

  it("finds the next local midnight across DST changes", () => {
    // Los Angeles springs forward on 2026-03-08: that day is 23 hours long.
    expect(new Date(nextDayStartMs(utc("2026-03-08T12:00:00Z"), "America/Los_Angeles")).toISOString()).toBe("2026-03-09T07:00:00.000Z");
    expect(new Date(nextDayStartMs(utc("2026-03-07T12:00:00Z"), "America/Los_Angeles")).toISOString()).toBe("2026-03-08T08:00:00.000Z");
    // Berlin falls back on 2026-10-25: that day is 25 hours long.
    expect(new Date(nextDayStartMs(utc("2026-10-25T10:00:00Z"), "Europe/Berlin")).toISOString()).toBe("2026-10-25T23:00:00.000Z");
    expect(new Date(nextDayStartMs(utc("2026-03-08T12:00:00Z"), "Asia/Kathmandu")).toISOString()).toBe("2026-03-08T18:15:00.000Z");
  });

  it("changes exactly at nextDayStartMs", () => {
    fc.assert(
      fc.property(fc.integer({ min: utc("2020-01-01T00:00:00Z"), max: utc("2030-01-01T00:00:00Z") }), fc.constantFrom("UTC", "America/Los_Angeles", "Europe/Berlin", "Asia/Kathmandu", "Australia/Lord_Howe"), (now, tz) => {
        const next = nextDayStartMs(now, tz);
        expect(dayKey(next - 1, tz)).toBe(dayKey(now, tz));
        expect(dayKey(next, tz)).not.toBe(dayKey(now, tz));
      }),
      { numRuns: 50 },
    );
  });
});

describe("budget window", () => {
  it("resets at the tenant's local midnight", () => {
    const tz = "America/New_York";
    let window = currentBudgetWindow(null, utc("2026-05-01T12:00:00Z"), tz);
    window = addUsage(window, { tokens: 900, toolCalls: 1 }, "create_task");
    expect(currentBudgetWindow(window, utc("2026-05-02T03:59:59Z"), tz)).toBe(window);
    const next = currentBudgetWindow(window, utc("2026-05-02T04:00:00Z"), tz);
    expect(next).toEqual({ dayKey: "2026-05-02", usage: emptyUsage(), toolCallsByTool: {} });
  });

  it("accumulates usage and per-tool counts, ignoring negative deltas", () => {
    let window = currentBudgetWindow(null, 0, "UTC");
    window = addUsage(window, { tokens: 100, costMicroUsd: 2_500, runtimeMs: 40 });
    window = addUsage(window, { toolCalls: 1 }, "create_task");
    window = addUsage(window, { tokens: -50 }, "create_task");
    window = addUsage(window, { toolCalls: 1 }, "memory_search");
    expect(window.usage).toEqual({ tokens: 100, costMicroUsd: 2_500, runtimeMs: 40, toolCalls: 3 });
    expect(window.toolCallsByTool).toEqual({ create_task: 2, memory_search: 1 });
  });
});

describe("checkBudget", () => {
  const usage = { tokens: 9_000, costMicroUsd: 400_000, runtimeMs: 10_000, toolCalls: 19 };

  it("passes under every limit", () => {
    expect(checkBudget(usage, { tokens: 10_000, toolCalls: 20 })).toEqual({ ok: true, warnings: [] });
    expect(checkBudget(usage, {})).toEqual({ ok: true, warnings: [] });
  });

  it("fails closed once a hard limit is reached", () => {
    expect(checkBudget({ ...usage, toolCalls: 20 }, { toolCalls: 20 })).toEqual({ ok: false, code: "budget_exceeded", dimension: "toolCalls", used: 20, limit: 20 });
    expect(checkBudget(usage, { runtimeMs: 0 })).toMatchObject({ ok: false, dimension: "runtimeMs" });
  });

  it("refuses a step whose projected consumption would pass the limit", () => {
    expect(checkBudget(usage, { tokens: 10_000 }, { projected: { tokens: 1_000 } }).ok).toBe(true);
    expect(checkBudget(usage, { tokens: 10_000 }, { projected: { tokens: 1_001 } })).toMatchObject({ ok: false, dimension: "tokens" });
  });

  it("reports the first exceeded dimension in a fixed order", () => {
    expect(checkBudget(usage, { toolCalls: 1, costMicroUsd: 1, tokens: 1 })).toMatchObject({ dimension: "tokens" });
  });

  it("warns at soft limits without refusing", () => {
    expect(checkBudget(usage, { tokens: 10_000 }, { softLimits: { tokens: 8_000, runtimeMs: 60_000 } })).toEqual({ ok: true, warnings: ["tokens"] });
  });

  it("validates limits as non-negative integers", () => {
    expect(budgetLimitsSchema.safeParse({ tokens: 50_000, costMicroUsd: 1_000_000 }).success).toBe(true);
    expect(budgetLimitsSchema.safeParse({ tokens: -1 }).success).toBe(false);
    expect(budgetLimitsSchema.safeParse({ costMicroUsd: 0.5 }).success).toBe(false);
    expect(budgetLimitsSchema.safeParse({ dollars: 5 }).success).toBe(false);
  });

  it("never lets recorded usage pass a hard limit when every step is checked first", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 }), fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 50 }), (limit, steps) => {
        let window = currentBudgetWindow(null, 0, "UTC");
        for (const tokens of steps) {
          if (checkBudget(window.usage, { tokens: limit }, { projected: { tokens } }).ok) window = addUsage(window, { tokens });
        }
        expect(window.usage.tokens).toBeLessThanOrEqual(limit);
      }),
    );
  });
});

describe("checkToolQuota (seed 003 ToolQuota)", () => {
  it("allows calls under both caps and refuses the one that would pass either", () => {
    const quota = { maxPerSession: 3, maxPerDay: 10 };
    expect(checkToolQuota("create_task", quota, { session: 2, day: 9 })).toEqual({ ok: true });
    expect(checkToolQuota("create_task", quota, { session: 3, day: 3 })).toEqual({
      ok: false,
      code: "tool_quota_exceeded",
      toolName: "create_task",
      window: "session",
      used: 3,
      limit: 3,
      auditReason: "tool_quota_exceeded:create_task",
    });
    expect(checkToolQuota("create_task", quota, { session: 0, day: 10 })).toMatchObject({ window: "day" });
  });

  it("treats a missing quota or cap as unlimited", () => {
    expect(checkToolQuota("x", undefined, { session: 1e6, day: 1e6 })).toEqual({ ok: true });
    expect(checkToolQuota("x", { maxPerDay: 5 }, { session: 1e6, day: 4 })).toEqual({ ok: true });
  });
});
