import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { admitSpawn, childExpiresAtMs, SPAWN_LIMITS, type SpawnAdmissionInput } from "../../src/core/governance/spawn-admission";

const base = (): SpawnAdmissionInput => ({
  request: { allowedCategoryIds: ["gym"], allowedTools: ["memory_search"], tokenBudget: 1_000 },
  parent: { lifecycle: "active", depth: 0, allowedCategoryIds: ["gym", "work"], allowedTools: ["memory_search", "spawn_agent", "create_task"] },
  liveChildren: 0,
  budget: { limit: 10_000, used: 0, reserved: 0 },
  killSwitch: { engaged: false },
});

const with_ = (patch: (input: SpawnAdmissionInput) => void): SpawnAdmissionInput => {
  const input = base();
  patch(input);
  return input;
};

describe("spawn admission (deny by default)", () => {
  it("admits a request inside every limit, one level deeper, with the budget left", () => {
    expect(admitSpawn(base())).toEqual({ admitted: true, childDepth: 1, budgetRemaining: 9_000 });
  });

  it("allows depth 2 and refuses depth 3", () => {
    expect(admitSpawn(with_((i) => (i.parent.depth = 1)))).toMatchObject({ admitted: true, childDepth: 2 });
    expect(admitSpawn(with_((i) => (i.parent.depth = 2)))).toMatchObject({ admitted: false, reason: "depth_exceeded" });
  });

  it("allows a fifth live child and refuses a sixth", () => {
    expect(admitSpawn(with_((i) => (i.liveChildren = 4)))).toMatchObject({ admitted: true });
    expect(admitSpawn(with_((i) => (i.liveChildren = SPAWN_LIMITS.maxConcurrentChildren)))).toMatchObject({ admitted: false, reason: "too_many_children" });
  });

  it("refuses categories or tools the parent does not hold, naming them", () => {
    const categories = admitSpawn(with_((i) => (i.request.allowedCategoryIds = ["gym", "secret"])));
    expect(categories).toMatchObject({ admitted: false, reason: "categories_not_subset" });
    expect(categories.admitted === false && categories.message).toContain("secret");
    const tools = admitSpawn(with_((i) => (i.request.allowedTools = ["memory_search", "create_or_update_rating"])));
    expect(tools).toMatchObject({ admitted: false, reason: "tools_not_subset" });
    expect(tools.admitted === false && tools.message).toContain("create_or_update_rating");
  });

  it("draws the token budget from what the parent has left today", () => {
    expect(admitSpawn(with_((i) => (i.budget = { limit: 10_000, used: 6_000, reserved: 3_000 })))).toMatchObject({ admitted: true, budgetRemaining: 0 });
    expect(admitSpawn(with_((i) => (i.budget = { limit: 10_000, used: 6_000, reserved: 3_001 })))).toMatchObject({ admitted: false, reason: "budget_exhausted" });
    expect(admitSpawn(with_((i) => (i.budget = { limit: null, used: 0, reserved: 0 })))).toMatchObject({ admitted: false, reason: "no_budget" });
    expect(admitSpawn(with_((i) => (i.request.tokenBudget = 0)))).toMatchObject({ admitted: false, reason: "budget_exhausted" });
  });

  it("refuses under a kill switch or a parent that is not active, before anything else", () => {
    expect(admitSpawn(with_((i) => (i.killSwitch = { engaged: true, source: "brake b1" })))).toMatchObject({ admitted: false, reason: "kill_switch" });
    expect(admitSpawn(with_((i) => (i.parent.lifecycle = "dormant")))).toMatchObject({ admitted: false, reason: "parent_not_active" });
    const everythingWrong = with_((i) => {
      i.killSwitch = { engaged: true, source: "x" };
      i.parent.depth = 5;
      i.liveChildren = 99;
    });
    expect(admitSpawn(everythingWrong)).toMatchObject({ reason: "kill_switch" });
  });

  it("never admits a request that breaks any cap (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 8 }),
        fc.subarray(["a", "b", "c", "d"]),
        fc.subarray(["t1", "t2", "t3"]),
        fc.integer({ min: -5, max: 20_000 }),
        fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: null }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.boolean(),
        (depth, live, categories, tools, tokenBudget, limit, used, braked) => {
          const verdict = admitSpawn({
            request: { allowedCategoryIds: categories, allowedTools: tools, tokenBudget },
            parent: { lifecycle: "active", depth, allowedCategoryIds: ["a", "b"], allowedTools: ["t1", "t2"] },
            liveChildren: live,
            budget: { limit, used, reserved: 0 },
            killSwitch: braked ? { engaged: true, source: "b" } : { engaged: false },
          });
          if (verdict.admitted) {
            expect(braked).toBe(false);
            expect(depth + 1).toBeLessThanOrEqual(SPAWN_LIMITS.maxDepth);
            expect(live).toBeLessThan(SPAWN_LIMITS.maxConcurrentChildren);
            expect(categories.every((c) => ["a", "b"].includes(c))).toBe(true);
            expect(tools.every((t) => ["t1", "t2"].includes(t))).toBe(true);
            expect(limit).not.toBeNull();
            expect(tokenBudget).toBeGreaterThan(0);
            expect(tokenBudget).toBeLessThanOrEqual(limit! - used);
          }
        },
      ),
    );
  });

  it("a child never outlives its parent's lineage deadline", () => {
    expect(childExpiresAtMs(1_000, 60, null)).toBe(61_000);
    expect(childExpiresAtMs(1_000, 60, 30_000)).toBe(30_000);
  });
});
