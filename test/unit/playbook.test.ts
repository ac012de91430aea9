import { describe, expect, it } from "vitest";
import { parseToolLines, renderArgs, renderTemplate, selectPlaybookReply, selectPlaybookRule } from "../../src/core/tools/playbook";

describe("builtin:playbook rules", () => {
  const rules = [
    { when: { reason: "subscription", token: "semanticKey|-|TASK" }, reply: "task changed", tools: [{ name: "create_follow_up_task", args: { sourceTaskId: "{{observation.entities.0.id}}" } }] },
    { when: { textPattern: "^hi" }, reply: "hello, {{text}}" },
  ];

  it("matches on reason, token and text pattern, first rule first", () => {
    expect(selectPlaybookRule(rules, { reason: "subscription", text: "", tokenKeys: ["semanticKey|-|TASK"] })?.ruleIndex).toBe(0);
    expect(selectPlaybookRule(rules, { reason: "subscription", text: "", tokenKeys: ["semanticKey|-|CHECKLIST"] })).toBeNull();
    expect(selectPlaybookReply(rules, { reason: "userInitiated", text: "hi there" }).reply).toBe("hello, hi there");
    expect(selectPlaybookReply(rules, { reason: "userInitiated", text: "bye" }, "fallback").reply).toBe("fallback");
  });

  it("renders argument templates, keeping a whole placeholder's type", () => {
    const context = { observation: { entities: [{ id: "task_1", n: 3 }] }, text: "x" };
    expect(renderArgs({ sourceTaskId: "{{observation.entities.0.id}}", count: "{{observation.entities.0.n}}", note: "for {{text}}", keep: "{{missing}}" }, context)).toEqual({
      sourceTaskId: "task_1",
      count: 3,
      note: "for x",
      keep: "{{missing}}",
    });
    expect(renderTemplate("{{a.b}}", { a: { b: { c: 1 } } })).toBe('{"c":1}');
    expect(renderTemplate("{{constructor}}", {})).toBe("{{constructor}}");
  });

  it("parses /tool lines and ignores anything else", () => {
    expect(parseToolLines('please\n/tool create_task {"title":"Run 5k","categoryId":"cat_1"}\n/tool sleep\n/tool bad {nope}\n/toolx x {}')).toEqual([
      { name: "create_task", args: { title: "Run 5k", categoryId: "cat_1" } },
      { name: "sleep", args: {} },
    ]);
  });
});
