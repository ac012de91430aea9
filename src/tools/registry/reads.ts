/** Category and context reads (seed 000 §4.2): scoped, side-effect free, never a write. */
import { z } from "zod";
import { defineFamily, READ_ONLY } from "./types";
import { entityId, limit, taskOut, taskStatus, text } from "./shared";

const categoryFilter = z
  .array(entityId("categoryIds[]"))
  .max(100)
  .optional()
  .describe("narrow to these categories; ids outside the agent's scope are ignored");

/** The metadata this file's tools share; each tool states only what differs. */
const readTool = defineFamily({ capabilitiesRequired: ["taskRead"], idempotencyStrategy: "read_only", scopeRules: ["read_filtered"], sideEffects: READ_ONLY, dataMinimizationPolicyRef: "dm.journal.tasks.v1" });

export const listAllowedCategories = readTool({
  name: "list_allowed_categories",
  description: "List the categories this agent may read and write (its allowedCategoryIds), with names.",
  inputSchema: z.strictObject({}),
  outputSchema: z.object({ categories: z.array(z.object({ id: z.string(), name: z.string(), color: z.string().nullable() })) }),
  capabilitiesRequired: ["categoryRead"],
  dataMinimizationPolicyRef: "dm.journal.categories.v1",
});

export const listTasksInScope = readTool({
  name: "list_tasks_in_scope",
  description: "List tasks in the agent's categories, newest first, optionally filtered by category, status, text or due date.",
  inputSchema: z.strictObject({
    categoryIds: categoryFilter,
    statuses: z.array(taskStatus).max(5).optional().describe("default: every status"),
    query: text("query", 200).optional().describe("case-insensitive substring of the title"),
    dueBefore: z.iso.date().optional().describe("only tasks due on or before this date (YYYY-MM-DD)"),
    limit: limit(100, 25),
    cursor: z.string().max(512).optional().describe("nextCursor of a previous page"),
  }),
  outputSchema: z.object({ tasks: z.array(taskOut), nextCursor: z.string().nullable() }),
});

export const resolveTaskReference = readTool({
  name: "resolve_task_reference",
  description:
    "Turn a loose reference (\"the migration task\", \"yesterday's workout\") into ranked task candidates. Never writes: pass the chosen taskId to a write tool; when `ambiguous` is true, ask the user.",
  inputSchema: z.strictObject({
    reference: text("reference", 500).describe("what the user called the task"),
    categoryIds: categoryFilter,
    includeClosed: z.boolean().default(false).describe("also match done and cancelled tasks"),
    limit: limit(10, 5),
  }),
  outputSchema: z.object({
    candidates: z.array(
      z.object({
        taskId: z.string(),
        title: z.string(),
        categoryId: z.string().nullable(),
        status: taskStatus,
        score: z.number().min(0).max(1),
        reason: z.string(),
      }),
    ),
    ambiguous: z.boolean(),
  }),
});

export const readTools = [listAllowedCategories, listTasksInScope, resolveTaskReference] as const;
