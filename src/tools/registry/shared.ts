/**
 * Zod building blocks shared by the tool declarations. Inputs are strict (unknown keys are refused,
 * so a model cannot smuggle fields); outputs strip unknown keys, which keeps results minimal.
 * Vocabulary (statuses, priorities, rating targets) is the journal's own (`src/schema/agents/journal.ts`).
 */
import { z } from "zod";
import { RATING_TARGET_TYPES, TASK_PRIORITIES, TASK_STATUSES } from "../../schema/agents/journal";

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A journal id (1-64 of A-Z a-z 0-9 _ -). */
export const entityId = (name: string, description?: string) => {
  const schema = z.string().regex(ID, `${name} must be an id of 1-64 characters of A-Z a-z 0-9 _ -`);
  return description ? schema.describe(description) : schema;
};

/** A non-empty list of distinct ids. */
export const idList = (name: string, max: number, description?: string) => {
  const schema = z
    .array(entityId(`${name}[]`))
    .min(1, `${name} must hold at least one id`)
    .max(max, `${name} may hold at most ${max} ids`)
    .refine((ids) => new Set(ids).size === ids.length, `${name} must not repeat an id`);
  return description ? schema.describe(description) : schema;
};

/** Trimmed, non-empty text. */
export const text = (name: string, max: number) =>
  z.string().trim().min(1, `${name} must not be empty`).max(max, `${name} must be at most ${max} characters`);

/** ISO-8601 instant with an offset (`2026-02-17T16:00:00-05:00`). */
export const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);

/** Calendar date `YYYY-MM-DD`. */
export const calendarDate = (description: string) => z.iso.date().describe(description);

/** `endedAt` strictly after `startedAt` (both optional). */
export const endsAfterStart = (entry: { startedAt?: string | undefined; endedAt?: string | undefined }) =>
  !entry.startedAt || !entry.endedAt || Date.parse(entry.endedAt) > Date.parse(entry.startedAt);

export const previewOnly = z.boolean().default(false).describe("true: answer with the planned changes and apply nothing");
export const taskStatus = z.enum(TASK_STATUSES);
export const taskPriority = z.enum(TASK_PRIORITIES);
/** How a task is closed. */
export const closingStatus = z.enum(["done", "cancelled"]);
export const ratingTargetType = z.enum(RATING_TARGET_TYPES);
export const limit = (max: number, fallback: number) => z.int().min(1).max(max).default(fallback).describe(`at most ${max}`);

// --- outputs --------------------------------------------------------------------------------

export const taskOut = z.object({
  id: z.string(),
  title: z.string(),
  status: taskStatus,
  priority: taskPriority,
  categoryId: z.string().nullable(),
  dueDate: z.string().nullable(),
  labels: z.array(z.string()),
});

export const checklistItemOut = z.object({ id: z.string(), checklistId: z.string(), text: z.string(), done: z.boolean() });
export const checklistOut = z.object({ id: z.string(), taskId: z.string(), title: z.string() });

export const timeEntryOut = z.object({
  id: z.string(),
  taskId: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  note: z.string().nullable(),
});

export const dayPlanBlockOut = z.object({
  id: z.string(),
  categoryId: z.string().nullable(),
  taskId: z.string().nullable(),
  startTime: z.string(),
  endTime: z.string(),
  note: z.string().nullable(),
});
export const dayPlanOut = z.object({
  id: z.string(),
  planDate: z.string(),
  blocks: z.array(dayPlanBlockOut),
  pinnedTaskIds: z.array(z.string()),
});

export const ratingOut = z.object({
  id: z.string(),
  targetType: ratingTargetType,
  targetId: z.string(),
  score: z.int().min(1).max(5),
  note: z.string().nullable(),
});
