import { describe, expect, it } from "vitest";
import { ARGUMENT_FIELDS_MAX, argumentFields, fieldLabel } from "../../src/core/tools/argument-fields";

describe("argument fields (a tool's arguments labelled for a person)", () => {
  it("labels camelCase, snake_case and acronyms in words, keeping the arguments' order and values", () => {
    expect(
      argumentFields({ sourceTaskId: "t_1", new_task_title: "Follow up", HTTPStatus: 200, nested: { a: 1 } }),
    ).toEqual([
      { key: "sourceTaskId", label: "Source task id", value: "t_1" },
      { key: "new_task_title", label: "New task title", value: "Follow up" },
      { key: "HTTPStatus", label: "Http status", value: 200 },
      { key: "nested", label: "Nested", value: { a: 1 } },
    ]);
    expect(fieldLabel("")).toBe("");
    expect(fieldLabel("_")).toBe("_");
  });

  it("bounds the number of fields", () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(argumentFields(many)).toHaveLength(ARGUMENT_FIELDS_MAX);
  });
});
