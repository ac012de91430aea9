/**
 * Kind rules of the journal: where a record hangs (its `parentId`) and which category it is filed
 * under, whether its references exist, and which uniqueness a kind keeps.
 *
 * Every record with a parent takes its parent's category: checklist → task, checklist item →
 * checklist (hence its task), time entry with a task → task, rating → its target. Only categories
 * (themselves), tasks, entries and task-less time entries carry a category of their own. References
 * in a body that name no live record of the right kind are `invalid_reference` (422).
 */
import { failure, type Result } from "../../../core/runtime/result";
import { JOURNAL_KINDS, type JournalType } from "../../../schema/agents/journal";
import type { JournalRow, JournalRows } from "./rows";

export type Fields = Record<string, unknown>;
export interface Placement {
  categoryId: string | null;
  parentId: string | null;
  /** The fields as stored: values derived from a parent are dropped. */
  data: Fields;
}

type Found = Result<{ row: JournalRow }>;

function reference(rows: JournalRows, type: JournalType, id: unknown, field: string): Found {
  const row = typeof id === "string" ? rows.live(id, type) : undefined;
  return row ? { ok: true, row } : failure("invalid_reference", `${field}: no ${JOURNAL_KINDS[type].noun} ${String(id)} exists`);
}

const placed = (categoryId: string | null, parentId: string | null, data: Fields): Result<{ placement: Placement }> => ({ ok: true, placement: { categoryId, parentId, data } });

/** Resolves a validated record's references and placement; `id` is the record's own id. */
export function place(rows: JournalRows, type: JournalType, id: string, fields: Fields): Result<{ placement: Placement }> {
  switch (type) {
    case "category":
      return placed(id, null, fields);
    case "task": {
      const category = reference(rows, "category", fields.categoryId, "categoryId");
      return category.ok ? placed(category.row.id, null, fields) : category;
    }
    case "checklist": {
      const task = reference(rows, "task", fields.taskId, "taskId");
      return task.ok ? placed(task.row.categoryId, task.row.id, fields) : task;
    }
    case "checklist_item": {
      const checklist = reference(rows, "checklist", fields.checklistId, "checklistId");
      return checklist.ok ? placed(checklist.row.categoryId, checklist.row.id, fields) : checklist;
    }
    case "time_entry":
      return placeTimeEntry(rows, fields);
    case "day_plan":
      return placeDayPlan(rows, id, fields);
    case "rating":
      return placeRating(rows, id, fields);
    case "entry": {
      if (fields.categoryId === undefined) return placed(null, null, fields);
      const category = reference(rows, "category", fields.categoryId, "categoryId");
      return category.ok ? placed(category.row.id, null, fields) : category;
    }
  }
}

/** With a task the category is the task's (a different explicit one is an error); without, its own or none. */
function placeTimeEntry(rows: JournalRows, fields: Fields): Result<{ placement: Placement }> {
  if (fields.sourceEntryId !== undefined) {
    const source = reference(rows, "entry", fields.sourceEntryId, "sourceEntryId");
    if (!source.ok) return source;
  }
  if (fields.taskId !== undefined) {
    const task = reference(rows, "task", fields.taskId, "taskId");
    if (!task.ok) return task;
    if (fields.categoryId !== undefined && fields.categoryId !== task.row.categoryId) {
      return failure("invalid_reference", `categoryId: a time entry of task ${task.row.id} is filed under its category ${task.row.categoryId}`);
    }
    const { categoryId: _derived, ...data } = fields;
    return placed(task.row.categoryId, task.row.id, data);
  }
  if (fields.categoryId === undefined) return placed(null, null, fields);
  const category = reference(rows, "category", fields.categoryId, "categoryId");
  return category.ok ? placed(category.row.id, null, fields) : category;
}

/** One live day plan per date; every task a block or pin names, and every block category, must exist. */
function placeDayPlan(rows: JournalRows, id: string, fields: Fields): Result<{ placement: Placement }> {
  const blocks = (fields.blocks ?? []) as Array<{ taskId?: string }>;
  const pinned = (fields.pinnedTaskIds ?? []) as string[];
  const wanted = [...blocks.map((block, index) => ({ field: `blocks.${index}.taskId`, taskId: block.taskId })), ...pinned.map((taskId, index) => ({ field: `pinnedTaskIds.${index}`, taskId }))];
  const named = [...new Set(wanted.flatMap((ref) => (ref.taskId === undefined ? [] : [ref.taskId])))];
  const found = new Set(rows.liveMany(named).filter((row) => row.type === "task").map((row) => row.id));
  const missing = wanted.find((ref) => ref.taskId !== undefined && !found.has(ref.taskId));
  if (missing) return failure("invalid_reference", `${missing.field}: no task ${missing.taskId} exists`);
  const categories = (fields.blocks ?? []) as Array<{ categoryId?: string }>;
  const namedCategories = [...new Set(categories.flatMap((block) => (block.categoryId === undefined ? [] : [block.categoryId])))];
  const liveCategories = new Set(rows.liveMany(namedCategories).filter((row) => row.type === "category").map((row) => row.id));
  const strayIndex = categories.findIndex((block) => block.categoryId !== undefined && !liveCategories.has(block.categoryId));
  if (strayIndex >= 0) return failure("invalid_reference", `blocks.${strayIndex}.categoryId: no category ${categories[strayIndex]!.categoryId} exists`);
  const existing = rows.findLive("day_plan", { date: fields.date as string }, id);
  if (existing) return failure("conflict", `a day plan for ${String(fields.date)} already exists (${existing.id}); patch it instead`);
  return placed(null, null, fields);
}

/** A rating hangs on its target and shares its category; one live rating per target. */
function placeRating(rows: JournalRows, id: string, fields: Fields): Result<{ placement: Placement }> {
  const target = reference(rows, fields.targetType as JournalType, fields.targetId, "targetId");
  if (!target.ok) return target;
  const existing = rows.findLive("rating", { targetId: target.row.id }, id);
  if (existing) return failure("conflict", `${target.row.id} already has a rating (${existing.id}); patch it instead`);
  return placed(target.row.categoryId, target.row.id, fields);
}

/** A category with live records filed under it cannot be deleted (its records would point nowhere). */
export function checkDeletable(rows: JournalRows, row: JournalRow): Result<object> {
  if (row.type === "category" && rows.categoryInUse(row.id)) {
    return failure("conflict", `category ${row.id} still has live records; move or delete them first`);
  }
  return { ok: true };
}

/**
 * The full candidate state of a patched record, to validate as a create body: stored fields,
 * overlaid by the patch (`null` clears). Unless the patch names a category, a time entry attached
 * to a task takes the task's, and one detached from its task keeps the one it had.
 */
export function mergePatch(type: JournalType, row: JournalRow, patch: Fields): Fields {
  const merged: Fields = { ...row.data };
  if (type === "time_entry" && patch.categoryId === undefined) {
    if (typeof patch.taskId === "string") delete merged.categoryId;
    else if (patch.taskId === null && row.categoryId !== null) merged.categoryId = row.categoryId;
  }
  for (const [name, value] of Object.entries(patch)) {
    if (name === "version" || value === undefined) continue;
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}
