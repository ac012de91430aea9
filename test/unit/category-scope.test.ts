import { describe, expect, it } from "vitest";
import { CategoryScope } from "../../src/core/governance/category-scope";

describe("category scope", () => {
  it("grants nothing when empty, and never a record without a category", () => {
    const none = new CategoryScope([]);
    expect(none.has("cat")).toBe(false);
    expect(none.covers({ type: "day_plan", categoryId: null })).toBe(false);
    const some = new CategoryScope(["b", "a"]);
    expect(some.has(null)).toBe(false);
    expect(some.covers({ type: "entry", categoryId: null })).toBe(false);
    expect(some.covers({ type: "day_plan", categoryId: null })).toBe(true);
    expect(some.covers({ type: "task", categoryId: "a" })).toBe(true);
  });

  it("narrows a filter to the scope, sorted and unique", () => {
    const scope = new CategoryScope(["b", "a"]);
    expect(scope.narrow()).toEqual(["a", "b"]);
    expect(scope.narrow(["z", "b", "b"])).toEqual(["b"]);
    expect(scope.narrow([])).toEqual([]);
  });
});
