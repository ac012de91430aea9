import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { targetRefsFromArgs } from "../../src/core/ids/target-refs";

describe("targetRefsFromArgs", () => {
  it("reads …Id and …Ids arguments as typed refs", () => {
    expect(targetRefsFromArgs({ sourceTaskId: "task_1", itemIds: ["cli_1", "cli_2"], categoryId: "cat_9", title: "x", timeEntryId: "te_1" })).toEqual([
      { type: "task", id: "task_1" },
      { type: "checklist_item", id: "cli_1" },
      { type: "checklist_item", id: "cli_2" },
      { type: "category", id: "cat_9" },
      { type: "time_entry", id: "te_1" },
    ]);
  });

  it("ignores non-id arguments and non-string ids", () => {
    expect(targetRefsFromArgs({ title: "a", estimateMinutes: 3, taskId: 42, labelIds: [1, null] })).toEqual([]);
  });

  // An independent oracle: the property compares the function with a second reading of the rule
  // (not f(x) with f(clone(x)), which holds for any deterministic function, broken or not).
  const idKey = fc.tuple(
    fc.constantFrom("", "source", "target", "new", "parent"),
    fc.constantFrom("task", "Task", "item", "Item", "category", "Category", "timeEntry", "TimeEntry"),
    fc.constantFrom("Id", "Ids"),
  ).map(([role, stem, suffix]) => (role ? role + stem.charAt(0).toUpperCase() + stem.slice(1) : stem.charAt(0).toLowerCase() + stem.slice(1)) + suffix);
  const otherKey = fc.string({ maxLength: 8 }).filter((key) => !/Ids?$/.test(key));
  const idValue = fc.oneof(fc.string({ maxLength: 300 }), fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)), { maxLength: 4 }), fc.integer(), fc.constant(null));
  const expectedType: Record<string, string> = { task: "task", item: "checklist_item", category: "category", timeentry: "time_entry" };

  it("yields one ref per valid id string of every …Id/…Ids key, typed by the key's stem, in argument order (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.oneof(idKey, otherKey), fc.oneof(idValue, fc.jsonValue())), { selector: ([key]) => key, maxLength: 8 }), (entries) => {
        const args = Object.fromEntries(entries);
        const expected: Array<{ type: string; id: string }> = [];
        for (const [key, value] of Object.entries(args)) {
          const match = /^(?:source|target|new|parent)?(.+?)Ids?$/i.exec(key);
          if (!match || !/Ids?$/.test(key)) continue;
          const type = expectedType[match[1]!.toLowerCase()];
          if (!type) continue;
          const ids: string[] = typeof value === "string" ? [value] : Array.isArray(value) ? (value as unknown[]).filter((v): v is string => typeof v === "string") : [];
          for (const id of ids) if (id.length >= 1 && id.length <= 256) expected.push({ type, id });
        }
        const refs = targetRefsFromArgs(args);
        expect(refs.filter((ref) => Object.values(expectedType).includes(ref.type))).toEqual(expected);
        // keys that name no id never produce a ref
        const idKeys = Object.keys(args).filter((key) => /Ids?$/.test(key));
        expect(targetRefsFromArgs(Object.fromEntries(Object.entries(args).filter(([key]) => !idKeys.includes(key))))).toEqual([]);
      }),
    );
  });
});
