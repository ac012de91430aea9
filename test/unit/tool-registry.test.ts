import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { builtinTools, getTool, listToolDescriptors, TOOL_NAMES, toolRegistry, type ToolDefinition } from "../../src/tools/registry";

const tools = builtinTools as readonly ToolDefinition[];

/** The built-in tools the product promises (docs/api.md), in catalogue order. */
const SPEC_CATALOG = [
  "list_allowed_categories", "list_tasks_in_scope", "resolve_task_reference",
  "create_task", "update_task_fields", "create_follow_up_task", "conclude_task_with_rollover",
  "create_checklist", "add_multiple_checklist_items", "update_checklist_items", "move_checklist_items", "move_checklist_items_to_new_task",
  "create_retrospective_time_entry", "start_task_timer", "stop_task_timer", "annotate_time_entry",
  "get_or_create_day_plan", "upsert_day_plan_blocks", "pin_day_plan_tasks", "replan_day_blocks",
  "get_ratings_summary", "get_rating_for_target", "create_or_update_rating",
  "memory_search", "memory_update_slot", "publish_report", "ask_user", "sleep",
  // delegation
  "spawn_agent",
];

/** Seed 000 §4.3 example payloads, minus `operationId` (derived by the runtime, never sent by a model). */
const SEED_EXAMPLES: Record<string, Record<string, unknown>> = {
  create_follow_up_task: { sourceTaskId: "task-id", newTaskTitle: "Next iteration", carryOverOpenChecklistItems: true, closeSourceTaskAs: "done", preserveCategoryAndLabels: true },
  create_retrospective_time_entry: {
    taskId: "task-id",
    startedAt: "2026-02-17T16:00:00-05:00",
    endedAt: "2026-02-17T18:00:00-05:00",
    description: "Implemented migration + fixed failing test",
    sourceEntryId: "audio-entry-id",
  },
  move_checklist_items: { itemIds: ["item-1", "item-2"], fromChecklistId: "checklist-a", toChecklistId: "checklist-b", preserveCheckedState: true },
  upsert_day_plan_blocks: {
    planDate: "2026-02-18",
    upserts: [{ id: "block-1", categoryId: "cat-focus", startTime: "2026-02-18T09:00:00-05:00", endTime: "2026-02-18T11:00:00-05:00", note: "Deep work" }],
    deletes: ["block-2"],
  },
};

describe("tool registry", () => {
  it("declares exactly the promised catalogue, each name once", () => {
    expect([...TOOL_NAMES]).toEqual(SPEC_CATALOG);
    expect(Object.keys(toolRegistry)).toHaveLength(tools.length);
  });

  it("getTool finds declarations and nothing inherited", () => {
    expect(getTool("create_task")).toBe(toolRegistry.create_task);
    for (const name of ["constructor", "__proto__", "toString", "teleport", ""]) expect(getTool(name)).toBeUndefined();
  });

  it("is frozen, down to each declaration's metadata", () => {
    expect(Object.isFrozen(toolRegistry)).toBe(true);
    for (const tool of tools) {
      expect(Object.isFrozen(tool)).toBe(true);
      expect(Object.isFrozen(tool.capabilitiesRequired)).toBe(true);
      expect(Object.isFrozen(tool.sideEffects)).toBe(true);
    }
    expect(() => ((toolRegistry as unknown as Record<string, unknown>)["sleep"] = null)).toThrow();
  });

  it("keeps its invariants: high risk previews, previewOnly iff supportsPreview, reads are read_only", () => {
    for (const tool of tools) {
      if (tool.riskLevel === "high") expect(tool.supportsPreview, tool.name).toBe(true);
      const inputProperties = Object.keys((listToolDescriptors().find((d) => d.name === tool.name)?.inputSchema["properties"] as object) ?? {});
      expect(inputProperties.includes("previewOnly"), tool.name).toBe(tool.supportsPreview);
      expect(tool.sideEffects.kind === "none", tool.name).toBe(tool.idempotencyStrategy === "read_only");
      if (tool.scopeRules.includes("none")) expect(tool.scopeRules, tool.name).toEqual(["none"]);
      expect(inputProperties, tool.name).not.toContain("operationId");
    }
  });

  it("refuses unknown arguments (strict inputs), including a model-supplied operationId", () => {
    for (const tool of tools) {
      const descriptor = listToolDescriptors().find((d) => d.name === tool.name);
      expect(descriptor?.inputSchema["additionalProperties"], tool.name).toBe(false);
    }
    expect(toolRegistry.move_checklist_items.inputSchema.safeParse({ ...SEED_EXAMPLES["move_checklist_items"], operationId: "uuid" }).success).toBe(false);
  });

  it("accepts the seed 000 example payloads, with zod and with the published JSON Schema", () => {
    for (const [name, args] of Object.entries(SEED_EXAMPLES)) {
      const tool = getTool(name) as ToolDefinition;
      expect(tool.inputSchema.safeParse(args).error, name).toBeUndefined();
      const descriptor = listToolDescriptors().find((d) => d.name === name);
      expect(new Validator(descriptor?.inputSchema as object, "2020-12").validate(args).valid, name).toBe(true);
    }
  });

  it("fills defaults and enforces cross-field rules the JSON Schema cannot express", () => {
    expect(toolRegistry.move_checklist_items.inputSchema.parse({ itemIds: ["i"], fromChecklistId: "a", toChecklistId: "b" })).toEqual({
      itemIds: ["i"],
      fromChecklistId: "a",
      toChecklistId: "b",
      preserveCheckedState: true,
      previewOnly: false,
    });
    expect(toolRegistry.move_checklist_items.inputSchema.safeParse({ itemIds: ["i"], fromChecklistId: "a", toChecklistId: "a" }).success).toBe(false);
    expect(toolRegistry.move_checklist_items.inputSchema.safeParse({ itemIds: ["i", "i"], fromChecklistId: "a", toChecklistId: "b" }).success).toBe(false);
    const retro = SEED_EXAMPLES["create_retrospective_time_entry"] as Record<string, unknown>;
    expect(toolRegistry.create_retrospective_time_entry.inputSchema.safeParse({ ...retro, endedAt: retro["startedAt"] }).success).toBe(false);
    expect(toolRegistry.stop_task_timer.inputSchema.safeParse({}).success).toBe(false);
    expect(toolRegistry.sleep.inputSchema.safeParse({ until: "2026-03-01T00:00:00Z", durationSeconds: 60 }).success).toBe(false);
    expect(toolRegistry.update_task_fields.inputSchema.safeParse({ taskId: "t", fields: {} }).success).toBe(false);
    expect(toolRegistry.create_follow_up_task.inputSchema.safeParse({ sourceTaskId: "t", newTaskTitle: "n", preserveCategoryAndLabels: false }).success).toBe(false);
    expect(toolRegistry.ask_user.inputSchema.safeParse({ question: "?", options: [{ id: "a", label: "A" }], recommendedOptionId: "b" }).success).toBe(false);
    expect(toolRegistry.upsert_day_plan_blocks.inputSchema.safeParse({ planDate: "2026-02-18" }).success).toBe(false);
  });
});

describe("listToolDescriptors", () => {
  it("describes every tool as plain JSON with input and output JSON Schemas", () => {
    const descriptors = listToolDescriptors();
    expect(descriptors.map((d) => d.name)).toEqual([...TOOL_NAMES]);
    expect(JSON.parse(JSON.stringify(descriptors))).toEqual(descriptors);
    for (const descriptor of descriptors) {
      expect(descriptor.inputSchema["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(descriptor.inputSchema["type"], descriptor.name).toBe("object");
      expect(descriptor.outputSchema["type"], descriptor.name).toBe("object");
      const tool = getTool(descriptor.name) as ToolDefinition;
      expect(descriptor).toMatchObject({ version: tool.version, riskLevel: tool.riskLevel, capabilitiesRequired: [...tool.capabilitiesRequired] });
    }
  });

  it("hands each caller its own copy, so one caller's mutation never reaches another", () => {
    const first = listToolDescriptors();
    (first[0] as { inputSchema: Record<string, unknown> }).inputSchema["type"] = "mutated";
    expect(listToolDescriptors()[0]?.inputSchema["type"]).toBe("object");
  });
});
