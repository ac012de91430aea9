/**
 * Day planning tools (seed 000 §4.2, §4.3 `upsert_day_plan_blocks`). Blocks carry ISO instants with
 * an offset, as in the seed's example; a block belongs to a category directly or through its task.
 */
import { z } from "zod";
import { defineFamily, HIGH_RISK } from "./types";
import { calendarDate, dateTime, dayPlanOut, entityId, idList, previewOnly } from "./shared";

const DAY_PLAN_EFFECTS = { kind: "journal_write", entityTypes: ["day_plan"], semanticKeys: ["DAY_PLAN"] } as const;
const planDate = calendarDate("the plan's day, YYYY-MM-DD");

const blockFields = {
  categoryId: entityId("categoryId").optional(),
  taskId: entityId("taskId").optional(),
  startTime: dateTime("block start, ISO-8601 with offset"),
  endTime: dateTime("block end, ISO-8601 with offset; after startTime"),
  note: z.string().max(500).optional(),
};
type BlockShape = { categoryId?: string | undefined; taskId?: string | undefined; startTime: string; endTime: string };
const blockIsValid = (block: BlockShape) =>
  (block.categoryId !== undefined || block.taskId !== undefined) && Date.parse(block.endTime) > Date.parse(block.startTime);
const BLOCK_RULE = "a block needs categoryId or taskId, and endTime after startTime";

const upsertBlock = z.strictObject({ id: entityId("upserts[].id", "block id; an unknown id creates the block"), ...blockFields }).refine(blockIsValid, BLOCK_RULE);
const layoutBlock = z.strictObject({ id: entityId("blocks[].id", "keep an existing block's id to move it").optional(), ...blockFields }).refine(blockIsValid, BLOCK_RULE);

/** The metadata this file's tools share; each tool states only what differs. */
const dayPlanTool = defineFamily({ capabilitiesRequired: ["dayPlanWrite"], idempotencyStrategy: "operation_id", scopeRules: ["target_category"], sideEffects: DAY_PLAN_EFFECTS, dataMinimizationPolicyRef: "dm.journal.day_plans.v1" });

export const getOrCreateDayPlan = dayPlanTool({
  name: "get_or_create_day_plan",
  description: "Read the day plan of a date, creating an empty one if none exists. Blocks outside the agent's categories are hidden.",
  inputSchema: z.strictObject({ planDate }),
  outputSchema: z.object({ dayPlan: dayPlanOut, created: z.boolean() }),
  capabilitiesRequired: ["dayPlanRead", "dayPlanWrite"],
  idempotencyStrategy: "natural_key",
  scopeRules: ["read_filtered"],
});

export const upsertDayPlanBlocks = dayPlanTool({
  name: "upsert_day_plan_blocks",
  description: "Create or change time blocks of a day plan by id, and delete blocks by id. Every touched block's category must be in scope.",
  inputSchema: z
    .strictObject({
      planDate,
      upserts: z.array(upsertBlock).max(96).default([]),
      deletes: z.array(entityId("deletes[]")).max(96).default([]),
      previewOnly,
    })
    .refine((args) => args.upserts.length + args.deletes.length > 0, "give at least one upsert or delete")
    .refine((args) => new Set([...args.upserts.map((block) => block.id), ...args.deletes]).size === args.upserts.length + args.deletes.length, "a block id may appear once across upserts and deletes"),
  outputSchema: z.object({ dayPlan: dayPlanOut, upsertedBlockIds: z.array(z.string()), deletedBlockIds: z.array(z.string()) }),
  riskLevel: "medium",
  supportsPreview: true,
});

export const pinDayPlanTasks = dayPlanTool({
  name: "pin_day_plan_tasks",
  description: "Pin tasks to (or unpin them from) a day plan.",
  inputSchema: z
    .strictObject({
      planDate,
      pin: idList("pin", 50, "task ids to pin").optional(),
      unpin: idList("unpin", 50, "task ids to unpin").optional(),
    })
    .refine((args) => args.pin !== undefined || args.unpin !== undefined, "give pin or unpin"),
  outputSchema: z.object({ dayPlan: dayPlanOut }),
});

export const replanDayBlocks = dayPlanTool({
  name: "replan_day_blocks",
  description:
    "Replace the layout of a day plan's in-scope blocks with a new one: blocks not listed are removed, listed ids are moved, new blocks get ids. High risk: preview first.",
  inputSchema: z.strictObject({
    planDate,
    blocks: z.array(layoutBlock).max(96),
    reason: z.string().max(500).optional().describe("why the day changed, kept with the plan"),
    previewOnly,
  }),
  outputSchema: z.object({
    dayPlan: dayPlanOut,
    createdBlockIds: z.array(z.string()),
    movedBlockIds: z.array(z.string()),
    removedBlockIds: z.array(z.string()),
  }),
  scopeRules: ["read_filtered", "target_category"],
  ...HIGH_RISK,
});

export const dayPlanTools = [getOrCreateDayPlan, upsertDayPlanBlocks, pinDayPlanTasks, replanDayBlocks] as const;
