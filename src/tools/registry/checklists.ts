/** Checklist lifecycle tools (seed 000 §4.2, §4.3 `move_checklist_items`). */
import { z } from "zod";
import { defineFamily, HIGH_RISK } from "./types";
import { checklistItemOut, checklistOut, entityId, idList, previewOnly, taskOut, text } from "./shared";

const CHECKLIST_EFFECTS = { kind: "journal_write", entityTypes: ["checklist", "checklist_item"], semanticKeys: ["CHECKLIST"] } as const;
const itemText = text("text", 2_000);
const newItem = z.strictObject({ text: itemText, done: z.boolean().default(false) });
const preserveCheckedState = z.boolean().default(true).describe("keep each item's done flag; false reopens moved items");

/** The metadata this file's tools share; each tool states only what differs. */
const checklistTool = defineFamily({ capabilitiesRequired: ["checklistWrite"], idempotencyStrategy: "operation_id", scopeRules: ["target_category"], sideEffects: CHECKLIST_EFFECTS, dataMinimizationPolicyRef: "dm.journal.checklists.v1" });

export const createChecklist = checklistTool({
  name: "create_checklist",
  description: "Create a checklist on a task, optionally with its first items.",
  inputSchema: z.strictObject({
    taskId: entityId("taskId"),
    title: text("title", 500),
    items: z.array(newItem).max(100).default([]),
  }),
  outputSchema: z.object({ checklist: checklistOut, items: z.array(checklistItemOut) }),
});

export const addMultipleChecklistItems = checklistTool({
  name: "add_multiple_checklist_items",
  description: "Append items to an existing checklist, in order.",
  inputSchema: z.strictObject({
    checklistId: entityId("checklistId"),
    items: z.array(newItem).min(1).max(100),
  }),
  outputSchema: z.object({ items: z.array(checklistItemOut) }),
});

export const updateChecklistItems = checklistTool({
  name: "update_checklist_items",
  description: "Check, uncheck or reword items of one checklist.",
  inputSchema: z.strictObject({
    checklistId: entityId("checklistId"),
    updates: z
      .array(
        z
          .strictObject({ itemId: entityId("updates[].itemId"), text: itemText.optional(), done: z.boolean().optional() })
          .refine((update) => update.text !== undefined || update.done !== undefined, "each update must change text or done"),
      )
      .min(1)
      .max(100)
      .refine((updates) => new Set(updates.map((update) => update.itemId)).size === updates.length, "updates must not repeat an itemId"),
  }),
  outputSchema: z.object({ items: z.array(checklistItemOut) }),
  riskLevel: "medium",
});

export const moveChecklistItems = checklistTool({
  name: "move_checklist_items",
  description: "Move items from one checklist to another (possibly on another task). Both ends must be in scope. High risk: preview first.",
  inputSchema: z
    .strictObject({
      itemIds: idList("itemIds", 100),
      fromChecklistId: entityId("fromChecklistId"),
      toChecklistId: entityId("toChecklistId"),
      preserveCheckedState,
      previewOnly,
    })
    .refine((args) => args.fromChecklistId !== args.toChecklistId, { message: "toChecklistId must differ from fromChecklistId", path: ["toChecklistId"] }),
  outputSchema: z.object({ movedItems: z.array(checklistItemOut) }),
  scopeRules: ["both_ends"],
  ...HIGH_RISK,
});

export const moveChecklistItemsToNewTask = checklistTool({
  name: "move_checklist_items_to_new_task",
  description:
    "Create a task (in the source task's category unless categoryId is given) with a new checklist, and move the items there. High risk: preview first.",
  inputSchema: z.strictObject({
    itemIds: idList("itemIds", 100),
    fromChecklistId: entityId("fromChecklistId"),
    newTaskTitle: text("newTaskTitle", 500),
    newChecklistTitle: text("newChecklistTitle", 500).optional().describe("default: the source checklist's title"),
    categoryId: entityId("categoryId", "category of the new task; default: the source task's").optional(),
    preserveCheckedState,
    previewOnly,
  }),
  outputSchema: z.object({ task: taskOut, checklist: checklistOut, movedItems: z.array(checklistItemOut) }),
  capabilitiesRequired: ["checklistWrite", "taskWrite"],
  scopeRules: ["both_ends"],
  sideEffects: { kind: "journal_write", entityTypes: ["task", "checklist", "checklist_item"], semanticKeys: ["TASK", "CHECKLIST"] },
  ...HIGH_RISK,
});

export const checklistTools = [
  createChecklist,
  addMultipleChecklistItems,
  updateChecklistItems,
  moveChecklistItems,
  moveChecklistItemsToNewTask,
] as const;
