import { describe, expect, it } from "vitest";
import { categoryIdsIn, outOfScopeCategories } from "../../src/core/memory/context-categories";

describe("categories in a model context", () => {
  it("finds categoryId and categoryIds in structured tool results", () => {
    const messages = [
      { role: "user", content: "hello" },
      { role: "tool", content: [{ type: "tool-result", output: { type: "json", value: { tasks: [{ id: "t1", categoryId: "gym" }, { id: "t2", categoryId: "work" }] } } }] },
      { role: "tool", content: [{ type: "tool-result", output: { type: "json", value: { categoryIds: ["home", 3] } } }] },
    ];
    expect(categoryIdsIn(messages)).toEqual(["gym", "home", "work"]);
  });

  it("reads JSON data embedded on its own line in text (how observations reach the model)", () => {
    const text = `[runtime observation]\ntask changed\n${JSON.stringify({ task: { id: "t9", categoryId: "finance" } })}`;
    expect(categoryIdsIn([{ role: "user", content: text }])).toEqual(["finance"]);
    expect(categoryIdsIn([{ role: "user", content: "my categoryId is gym {not json" }])).toEqual([]);
  });

  it("ignores the model's own tool-call arguments", () => {
    const messages = [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "create_task", input: { categoryId: "elsewhere" } }] }];
    expect(categoryIdsIn(messages)).toEqual([]);
  });

  it("names the context's categories outside the agent's scope", () => {
    expect(outOfScopeCategories(["gym", "work"], ["gym"])).toEqual(["work"]);
    expect(outOfScopeCategories(["gym"], ["gym", "work"])).toEqual([]);
    expect(outOfScopeCategories([], [])).toEqual([]);
    expect(outOfScopeCategories(["gym"], [])).toEqual(["gym"]);
  });
});
