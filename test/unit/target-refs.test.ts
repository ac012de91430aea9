import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { targetRefsFromArgs } from "../../src/core/target-refs";

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

  it("is a pure function of the arguments (property)", () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (args) => {
        expect(targetRefsFromArgs(args)).toEqual(targetRefsFromArgs(structuredClone(args)));
      }),
    );
  });
});
