/**
 * The notification tokens of one journal write (seed 000 "Subscription token strategy").
 * Pure: the same write always yields the same token set.
 *
 * - semanticKey: the kind key of every written record (TASK, CHECKLIST — also for checklist items —
 *   TIME_ENTRY, DAY_PLAN, RATING, ENTRY, CATEGORY).
 * - subtypeToken:
 *   - `journal.op` = create | update | delete — what the request did to the record it named;
 *   - `journal.type` = the record type of every written record (tells checklist from checklist_item);
 *   - `{type}.field` = each field an update changed (`task.field` = `dueDate`, `categoryId`, …);
 *   - state tokens, on create and whenever the value changes: `task.status`, `task.priority`,
 *     `checklist_item.done` (`true`|`false`), `time_entry.state` (`running`|`stopped`),
 *     `rating.targetType`, `rating.score`.
 * - entityId: every written record (the named one and cascaded descendants), the category before and
 *   after, the parent chain before and after (an item's checklist and task, a rating's target, …),
 *   and the ids its fields name before and after (day-plan block and pinned tasks, a time entry's
 *   source entry).
 */
import { tokens, type TypedToken } from "../../../core/wakes/tokens";
import type { JournalRecord, JournalType } from "../../../schema/agents/journal";
import { KIND_META } from "./kinds";

export type JournalOp = "create" | "update" | "delete";

export interface JournalWrite {
  op: JournalOp;
  /** The record the request named, before (null on create) and after the write. */
  before: JournalRecord | null;
  after: JournalRecord;
  /** Descendants rewritten in the same transaction: re-filed under a new category, or tombstoned with their parent. */
  cascaded: ReadonlyArray<JournalRecord>;
  /** Parent chains of the named record before and after the write (e.g. an item's checklist and its task). */
  ancestors: ReadonlyArray<string>;
  /** Fields an update changed (`categoryId` included when the effective category moved). */
  changedFields: ReadonlyArray<string>;
}

const STATE_TOKENS: Partial<Record<JournalType, Record<string, (record: JournalRecord) => string | undefined>>> = {
  task: { "task.status": (r) => str(r.status), "task.priority": (r) => str(r.priority) },
  checklist_item: { "checklist_item.done": (r) => (typeof r.done === "boolean" ? String(r.done) : undefined) },
  time_entry: { "time_entry.state": (r) => (r.endedAt === undefined ? "running" : "stopped") },
  rating: { "rating.targetType": (r) => str(r.targetType), "rating.score": (r) => (typeof r.score === "number" ? String(r.score) : undefined) },
};

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Ids a record names in its fields: its task, checklist, rating target, source entry, planned and pinned tasks, block categories. */
export function referencedIds(record: JournalRecord): string[] {
  const ids = [record.taskId, record.checklistId, record.targetId, record.sourceEntryId].flatMap((id) => (typeof id === "string" ? [id] : []));
  if (Array.isArray(record.blocks)) {
    for (const block of record.blocks as Array<{ taskId?: unknown; categoryId?: unknown }>) {
      if (typeof block.taskId === "string") ids.push(block.taskId);
      if (typeof block.categoryId === "string") ids.push(block.categoryId);
    }
  }
  if (Array.isArray(record.pinnedTaskIds)) for (const id of record.pinnedTaskIds) if (typeof id === "string") ids.push(id);
  return ids;
}

/** The (unnormalized) token list of a write; the notification log dedupes and sorts it. */
export function journalTokens(write: JournalWrite): TypedToken[] {
  const out: TypedToken[] = [tokens.subtype("journal.op", write.op)];
  for (const record of [write.after, ...write.cascaded]) {
    out.push(tokens.semanticKey(KIND_META[record.type].semanticKey), tokens.subtype("journal.type", record.type), tokens.entityId(record.id));
  }
  const related = [write.after.categoryId, write.before?.categoryId, ...write.ancestors, ...referencedIds(write.after), ...(write.before ? referencedIds(write.before) : [])];
  for (const id of related) if (typeof id === "string") out.push(tokens.entityId(id));
  if (write.op === "update") for (const field of write.changedFields) out.push(tokens.subtype(`${write.after.type}.field`, field));
  if (write.op !== "delete") {
    for (const [namespace, read] of Object.entries(STATE_TOKENS[write.after.type] ?? {})) {
      const value = read(write.after);
      if (value !== undefined && (write.before === null || read(write.before) !== value)) out.push(tokens.subtype(namespace, value));
    }
  }
  return out;
}
