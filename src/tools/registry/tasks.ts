/** Task lifecycle tools (seed 000 §4.2, §4.3 `create_follow_up_task`). */
import { z } from "zod";
import { defineFamily, HIGH_RISK } from "./types";
import { calendarDate, closingStatus, entityId, previewOnly, taskOut, taskPriority, taskStatus, text } from "./shared";

const TASK_EFFECTS = { kind: "journal_write", entityTypes: ["task"], semanticKeys: ["TASK"] } as const;
const TASK_AND_CHECKLIST_EFFECTS = {
  kind: "journal_write",
  entityTypes: ["task", "checklist", "checklist_item"],
  semanticKeys: ["TASK", "CHECKLIST"],
} as const;

const fields = {
  title: text("title", 500),
  estimateMinutes: z.int().min(0).max(100_000).describe("whole minutes"),
  dueDate: calendarDate("due date, YYYY-MM-DD"),
  labels: z.array(text("labels[]", 64)).max(50),
  notes: z.string().max(20_000),
};

/** The metadata this file's tools share; each tool states only what differs. */
const taskTool = defineFamily({ capabilitiesRequired: ["taskWrite"], idempotencyStrategy: "operation_id", scopeRules: ["target_category", "both_ends"], sideEffects: TASK_EFFECTS, dataMinimizationPolicyRef: "dm.journal.tasks.v1" });

export const createTask = taskTool({
  name: "create_task",
  description: "Create a task in one of the agent's categories.",
  inputSchema: z.strictObject({
    title: fields.title,
    categoryId: entityId("categoryId", "a category in the agent's scope"),
    status: taskStatus.default("open"),
    priority: taskPriority.default("medium"),
    estimateMinutes: fields.estimateMinutes.optional(),
    dueDate: fields.dueDate.optional(),
    labels: fields.labels.default([]),
    notes: fields.notes.optional(),
  }),
  outputSchema: z.object({ task: taskOut }),
  scopeRules: ["target_category"],
});

export const updateTaskFields = taskTool({
  name: "update_task_fields",
  description:
    "Change fields of one task (title, status, priority, estimate, due date, labels, notes, category). null clears an optional field; moving to another category needs both categories in scope.",
  inputSchema: z.strictObject({
    taskId: entityId("taskId", "an explicit task id (resolve references first)"),
    fields: z
      .strictObject({
        title: fields.title.optional(),
        status: taskStatus.optional(),
        priority: taskPriority.optional(),
        estimateMinutes: fields.estimateMinutes.nullable().optional(),
        dueDate: fields.dueDate.nullable().optional(),
        labels: fields.labels.optional(),
        notes: fields.notes.nullable().optional(),
        categoryId: entityId("fields.categoryId").optional(),
      })
      .refine((changes) => Object.keys(changes).length > 0, "fields must change at least one field"),
    expectedVersion: z.int().min(1).optional().describe("fail with version_conflict unless the task is still at this version"),
  }),
  outputSchema: z.object({ task: taskOut, changedFields: z.array(z.string()) }),
  riskLevel: "medium",
});

export const createFollowUpTask = taskTool({
  name: "create_follow_up_task",
  description:
    "Create the next task after a source task: optionally carry its open checklist items over and close the source. The new task keeps the source's category and labels unless told otherwise.",
  inputSchema: z
    .strictObject({
      sourceTaskId: entityId("sourceTaskId"),
      newTaskTitle: fields.title,
      carryOverOpenChecklistItems: z.boolean().default(true),
      closeSourceTaskAs: closingStatus.optional().describe("close the source task with this status; absent: leave it as is"),
      preserveCategoryAndLabels: z.boolean().default(true),
      categoryId: entityId("categoryId", "category of the new task when preserveCategoryAndLabels is false").optional(),
    })
    .refine((args) => args.preserveCategoryAndLabels === (args.categoryId === undefined), {
      message: "categoryId is required when preserveCategoryAndLabels is false, and not allowed otherwise",
      path: ["categoryId"],
    }),
  outputSchema: z.object({ sourceTask: taskOut, followUpTask: taskOut, carriedItemIds: z.array(z.string()) }),
  capabilitiesRequired: ["taskWrite", "checklistWrite"],
  sideEffects: TASK_AND_CHECKLIST_EFFECTS,
  riskLevel: "medium",
});

const rollover = z.discriminatedUnion("target", [
  z.strictObject({ target: z.literal("new_task"), title: fields.title, dueDate: fields.dueDate.optional() }),
  z.strictObject({ target: z.literal("existing_task"), taskId: entityId("rollover.taskId") }),
  z.strictObject({ target: z.literal("none") }),
]);

export const concludeTaskWithRollover = taskTool({
  name: "conclude_task_with_rollover",
  description:
    "Close a task and move its open checklist items to a new or an existing task (or drop them with target none). High risk: call with previewOnly first, then apply.",
  inputSchema: z.strictObject({
    taskId: entityId("taskId"),
    concludeAs: closingStatus.default("done"),
    rollover: rollover.describe("where open checklist items go"),
    note: z.string().max(2_000).optional().describe("appended to the concluded task's notes"),
    previewOnly,
  }),
  outputSchema: z.object({ concludedTask: taskOut, rolloverTask: taskOut.nullable(), movedItemIds: z.array(z.string()) }),
  capabilitiesRequired: ["taskWrite", "checklistWrite"],
  sideEffects: TASK_AND_CHECKLIST_EFFECTS,
  ...HIGH_RISK,
});

export const taskTools = [createTask, updateTaskFields, createFollowUpTask, concludeTaskWithRollover] as const;
