/**
 * The journal domain's shapes (seed 000 §4.2): one create, patch and
 * record schema per kind. Create and patch bodies are strict; every message names its field.
 * A record is `{id, type, categoryId, version, createdAt, updatedAt, ...fields}` (`deletedAt` only
 * on the tombstone a DELETE answers with). Patches carry the `version` they were read at; `null`
 * clears an optional field.
 */
import { z } from "@hono/zod-openapi";
import { IsoTimestamp, PaginationQuery } from "../common";

export const JOURNAL_TYPES = ["category", "task", "checklist", "checklist_item", "time_entry", "day_plan", "rating", "entry"] as const;
export type JournalType = (typeof JOURNAL_TYPES)[number];

export const TASK_STATUSES = ["open", "in_progress", "blocked", "done", "cancelled"] as const;
export const TASK_PRIORITIES = ["low", "medium", "high", "urgent"] as const;
export const RATING_TARGET_TYPES = ["task", "time_entry", "day_plan", "entry"] as const;

type Issue = { input?: unknown };
/** "x is required" when absent, "x must be …" otherwise. */
const expect = (name: string, what: string) => ({ error: (issue: Issue) => (issue.input === undefined ? `${name} is required` : `${name} must be ${what}`) });

const text = (name: string, max: number) =>
  z.string(expect(name, "a string")).trim().min(1, `${name} must not be empty`).max(max, `${name} must be at most ${max} characters`);
const ref = (name: string) =>
  z.string(expect(name, "an id")).regex(/^[A-Za-z0-9_-]{1,64}$/, `${name} must be an id of 1-64 characters of A-Z a-z 0-9 _ -`);
const timestamp = (name: string) =>
  z.iso.datetime({ offset: true, ...expect(name, "an ISO-8601 timestamp, e.g. 2026-02-17T16:00:00Z") }).transform((value) => new Date(value).toISOString());
const isCalendarDate = (value: string) => {
  const [y, m, d] = value.split("-").map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
};
const calendarDate = (name: string) =>
  z
    .string(expect(name, "a date (YYYY-MM-DD)"))
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${name} must be a date (YYYY-MM-DD)`, abort: true })
    .refine(isCalendarDate, `${name} must be a real calendar date`);
const clock = (name: string) => z.string(expect(name, "a time HH:MM")).regex(/^([01]\d|2[0-3]):[0-5]\d$/, `${name} must be a time HH:MM (00:00-23:59)`);
const uniqueIds = (name: string, max: number) =>
  z.array(ref(`${name}[]`), expect(name, "an array of ids")).max(max, `${name} may hold at most ${max} ids`).refine((ids) => new Set(ids).size === ids.length, `${name} must not repeat an id`);

/** The version a patch or delete was read at; a stale one answers 409 `version_conflict`. */
export const Version = z.int(expect("version", "the record's current version (an integer)")).min(1, "version must be >= 1");

/** What every journal record carries; a named schema, so the OpenAPI document and the typed client state it once. */
export const JournalRecordBase = z
  .object({
    id: z.string(),
    categoryId: z.string().nullable(),
    version: z.number().int(),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    deletedAt: IsoTimestamp.optional(),
  })
  .openapi("JournalRecordBase");

// --- category -------------------------------------------------------------------------------
const category = { name: text("name", 120), color: z.string(expect("color", "a colour #RRGGBB")).regex(/^#[0-9A-Fa-f]{6}$/, "color must be a colour #RRGGBB") };
export const CategoryCreate = z.strictObject({ name: category.name, color: category.color.optional() }).openapi("JournalCategoryCreate");
export const CategoryPatch = z.strictObject({ version: Version, name: category.name.optional(), color: category.color.nullable().optional() }).openapi("JournalCategoryPatch");
export const CategoryRecord = JournalRecordBase.extend({ type: z.literal("category"), name: z.string(), color: z.string().optional() }).openapi("JournalCategory");

// --- task -----------------------------------------------------------------------------------
const task = {
  title: text("title", 500),
  status: z.enum(TASK_STATUSES, { error: `status must be one of ${TASK_STATUSES.join(", ")}` }),
  priority: z.enum(TASK_PRIORITIES, { error: `priority must be one of ${TASK_PRIORITIES.join(", ")}` }),
  estimateMinutes: z.int(expect("estimateMinutes", "a whole number of minutes")).min(0, "estimateMinutes must be >= 0").max(100_000, "estimateMinutes must be <= 100000"),
  dueDate: calendarDate("dueDate"),
  labels: z
    .array(text("labels[]", 64), expect("labels", "an array of strings"))
    .max(50, "labels may hold at most 50 labels")
    .transform((labels) => [...new Set(labels)]),
  categoryId: ref("categoryId"),
  notes: z.string(expect("notes", "a string")).max(20_000, "notes must be at most 20000 characters"),
};
export const TaskCreate = z
  .strictObject({
    title: task.title,
    status: task.status.default("open"),
    priority: task.priority.default("medium"),
    estimateMinutes: task.estimateMinutes.optional(),
    dueDate: task.dueDate.optional(),
    labels: task.labels.default([]),
    categoryId: task.categoryId,
    notes: task.notes.optional(),
  })
  .openapi("JournalTaskCreate");
export const TaskPatch = z
  .strictObject({
    version: Version,
    title: task.title.optional(),
    status: task.status.optional(),
    priority: task.priority.optional(),
    estimateMinutes: task.estimateMinutes.nullable().optional(),
    dueDate: task.dueDate.nullable().optional(),
    labels: task.labels.optional(),
    categoryId: task.categoryId.optional(),
    notes: task.notes.nullable().optional(),
  })
  .openapi("JournalTaskPatch");
export const TaskRecord = JournalRecordBase
  .extend({
    type: z.literal("task"),
    title: z.string(),
    status: z.enum(TASK_STATUSES),
    priority: z.enum(TASK_PRIORITIES),
    estimateMinutes: z.number().int().optional(),
    dueDate: z.string().optional(),
    labels: z.array(z.string()),
    notes: z.string().optional(),
  })
  .openapi("JournalTask");

// --- checklist and checklist item -----------------------------------------------------------
export const ChecklistCreate = z.strictObject({ taskId: ref("taskId"), title: text("title", 500) }).openapi("JournalChecklistCreate");
export const ChecklistPatch = z.strictObject({ version: Version, taskId: ref("taskId").optional(), title: text("title", 500).optional() }).openapi("JournalChecklistPatch");
export const ChecklistRecord = JournalRecordBase.extend({ type: z.literal("checklist"), taskId: z.string(), title: z.string() }).openapi("JournalChecklist");

const done = z.boolean(expect("done", "true or false"));
export const ChecklistItemCreate = z.strictObject({ checklistId: ref("checklistId"), text: text("text", 2000), done: done.default(false) }).openapi("JournalChecklistItemCreate");
export const ChecklistItemPatch = z
  .strictObject({ version: Version, checklistId: ref("checklistId").optional(), text: text("text", 2000).optional(), done: done.optional() })
  .openapi("JournalChecklistItemPatch");
export const ChecklistItemRecord = JournalRecordBase.extend({ type: z.literal("checklist_item"), checklistId: z.string(), text: z.string(), done: z.boolean() }).openapi("JournalChecklistItem");

// --- time entry -----------------------------------------------------------------------------
const endsAfterStart = (entry: { startedAt?: string | undefined; endedAt?: string | null | undefined }) => !entry.startedAt || !entry.endedAt || entry.endedAt >= entry.startedAt;
const note = z.string(expect("note", "a string")).max(2000, "note must be at most 2000 characters");
export const TimeEntryCreate = z
  .strictObject({
    taskId: ref("taskId").optional(),
    categoryId: ref("categoryId").optional(),
    startedAt: timestamp("startedAt"),
    endedAt: timestamp("endedAt").optional(),
    note: note.optional(),
    sourceEntryId: ref("sourceEntryId").optional(),
  })
  .refine(endsAfterStart, { message: "endedAt must not be before startedAt", path: ["endedAt"] })
  .openapi("JournalTimeEntryCreate");
export const TimeEntryPatch = z
  .strictObject({
    version: Version,
    taskId: ref("taskId").nullable().optional(),
    categoryId: ref("categoryId").nullable().optional(),
    startedAt: timestamp("startedAt").optional(),
    endedAt: timestamp("endedAt").nullable().optional(),
    note: note.nullable().optional(),
    sourceEntryId: ref("sourceEntryId").nullable().optional(),
  })
  .refine(endsAfterStart, { message: "endedAt must not be before startedAt", path: ["endedAt"] })
  .openapi("JournalTimeEntryPatch");
export const TimeEntryRecord = JournalRecordBase
  .extend({
    type: z.literal("time_entry"),
    taskId: z.string().optional(),
    startedAt: IsoTimestamp,
    endedAt: IsoTimestamp.optional(),
    note: z.string().optional(),
    /** The journal entry (e.g. a dictated note) the time was taken from. */
    sourceEntryId: z.string().optional(),
  })
  .openapi("JournalTimeEntry");

// --- day plan -------------------------------------------------------------------------------
export const DayPlanBlock = z
  .strictObject({
    id: ref("blocks[].id"),
    start: clock("start"),
    end: clock("end"),
    taskId: ref("taskId").optional(),
    /** The block's category when it has no task (a task's block belongs to the task's category). */
    categoryId: ref("categoryId").optional(),
    label: text("label", 200),
  })
  .refine((block) => block.end > block.start, { message: "end must be after start", path: ["end"] })
  .openapi("JournalDayPlanBlock");
const blocks = z
  .array(DayPlanBlock, expect("blocks", "an array of blocks"))
  .max(96, "blocks may hold at most 96 blocks")
  .refine((list) => new Set(list.map((block) => block.id)).size === list.length, "blocks must have unique ids");
export const DayPlanCreate = z
  .strictObject({ date: calendarDate("date"), blocks: blocks.default([]), pinnedTaskIds: uniqueIds("pinnedTaskIds", 50).default([]) })
  .openapi("JournalDayPlanCreate");
export const DayPlanPatch = z
  .strictObject({ version: Version, date: calendarDate("date").optional(), blocks: blocks.optional(), pinnedTaskIds: uniqueIds("pinnedTaskIds", 50).optional() })
  .openapi("JournalDayPlanPatch");
export const DayPlanRecord = JournalRecordBase
  .extend({
    type: z.literal("day_plan"),
    date: z.string(),
    blocks: z.array(z.object({ id: z.string(), start: z.string(), end: z.string(), taskId: z.string().optional(), categoryId: z.string().optional(), label: z.string() })),
    pinnedTaskIds: z.array(z.string()),
  })
  .openapi("JournalDayPlan");

// --- rating ---------------------------------------------------------------------------------
const score = z.int(expect("score", "an integer from 1 to 5")).min(1, "score must be from 1 to 5").max(5, "score must be from 1 to 5");
const targetType = z.enum(RATING_TARGET_TYPES, { error: `targetType must be one of ${RATING_TARGET_TYPES.join(", ")}` });
export const RatingCreate = z.strictObject({ targetType, targetId: ref("targetId"), score, note: note.optional() }).openapi("JournalRatingCreate");
export const RatingPatch = z.strictObject({ version: Version, score: score.optional(), note: note.nullable().optional() }).openapi("JournalRatingPatch");
export const RatingRecord = JournalRecordBase
  .extend({ type: z.literal("rating"), targetType: z.enum(RATING_TARGET_TYPES), targetId: z.string(), score: z.number().int(), note: z.string().optional() })
  .openapi("JournalRating");

// --- entry ----------------------------------------------------------------------------------
export const EntryCreate = z
  .strictObject({ text: text("text", 20_000), categoryId: ref("categoryId").optional(), occurredAt: timestamp("occurredAt").optional() })
  .openapi("JournalEntryCreate");
export const EntryPatch = z
  .strictObject({ version: Version, text: text("text", 20_000).optional(), categoryId: ref("categoryId").nullable().optional(), occurredAt: timestamp("occurredAt").nullable().optional() })
  .openapi("JournalEntryPatch");
export const EntryRecord = JournalRecordBase.extend({ type: z.literal("entry"), text: z.string(), occurredAt: IsoTimestamp.optional() }).openapi("JournalEntry");

// --- registry, lists ------------------------------------------------------------------------
export const JournalSchemas = {
  category: { create: CategoryCreate, patch: CategoryPatch, record: CategoryRecord },
  task: { create: TaskCreate, patch: TaskPatch, record: TaskRecord },
  checklist: { create: ChecklistCreate, patch: ChecklistPatch, record: ChecklistRecord },
  checklist_item: { create: ChecklistItemCreate, patch: ChecklistItemPatch, record: ChecklistItemRecord },
  time_entry: { create: TimeEntryCreate, patch: TimeEntryPatch, record: TimeEntryRecord },
  day_plan: { create: DayPlanCreate, patch: DayPlanPatch, record: DayPlanRecord },
  rating: { create: RatingCreate, patch: RatingPatch, record: RatingRecord },
  entry: { create: EntryCreate, patch: EntryPatch, record: EntryRecord },
} as const;

/** List filters (`?name=`); each kind accepts only its own. */
const FilterFields = z.object({
  categoryId: ref("categoryId"),
  status: task.status,
  taskId: ref("taskId"),
  checklistId: ref("checklistId"),
  date: calendarDate("date"),
  targetType,
  targetId: ref("targetId"),
});
export type JournalFilters = Partial<z.infer<typeof FilterFields>>;
export type JournalFilter = keyof JournalFilters;

/** URL segment under /v1/journal/, display name, and accepted list filters per kind. */
export const JOURNAL_KINDS: Record<JournalType, { path: string; noun: string; filters: readonly JournalFilter[] }> = {
  category: { path: "categories", noun: "category", filters: [] },
  task: { path: "tasks", noun: "task", filters: ["categoryId", "status"] },
  checklist: { path: "checklists", noun: "checklist", filters: ["categoryId", "taskId"] },
  checklist_item: { path: "checklist-items", noun: "checklist item", filters: ["categoryId", "checklistId"] },
  time_entry: { path: "time-entries", noun: "time entry", filters: ["categoryId", "taskId"] },
  day_plan: { path: "day-plans", noun: "day plan", filters: ["date"] },
  rating: { path: "ratings", noun: "rating", filters: ["targetType", "targetId"] },
  entry: { path: "entries", noun: "entry", filters: ["categoryId"] },
};

/** `?limit=&cursor=` plus the kind's filters. */
export function journalListQuery(type: JournalType) {
  const mask = Object.fromEntries(JOURNAL_KINDS[type].filters.map((name) => [name, true])) as Partial<Record<JournalFilter, true>>;
  return PaginationQuery.extend(FilterFields.pick(mask).partial().shape);
}

export const JournalIdParam = z.object({ id: ref("id").openapi({ param: { name: "id", in: "path" } }) });
export const JournalDeleteQuery = z.object({ version: z.coerce.number(expect("version", "the record's current version (?version=N)")).pipe(Version) });

/** A record as the DO returns it; the per-kind record schemas describe its fields. */
export interface JournalRecord {
  id: string;
  type: JournalType;
  categoryId: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
  [field: string]: unknown;
}
