/**
 * What a journal tool handler sees and answers. A handler runs inside the executor's transaction
 * (or its rolled-back twin for a preview): it reads and writes through `journal`, checks every
 * target against `scope`, names new records with `newId`, and answers its tool's output or a
 * failure value — any failure rolls back everything the handler wrote.
 */
import type { z } from "zod";
import type { CategoryScope } from "../../core/governance/category-scope";
import type { EntityRef } from "../../core/ids/entity-refs";
import { rankTaskReferences } from "../../core/tools/task-reference";
import type { JournalRecord, JournalType } from "../../schema/agents/journal";
import type { ToolRegistry } from "../registry";
import { toRecord, type JournalRow, type JournalWriter, type WriteResult } from "../../objects/tenant/journal";
import { taskCandidates } from "./queries";

export type Json = z.core.util.JSONType;

export interface HandlerContext {
  journal: JournalWriter;
  scope: CategoryScope;
  /** A new record id of `type`, derived from the call's intent and `label` (unique within one call). */
  newId(type: JournalType, label: string): string;
  /** A stable hex digest of the call's intent and `label`: ids that are not journal records (day-plan blocks). */
  derive(label: string): string;
  /** The tenant's IANA time zone (day-plan clocks, rating days). */
  timeZone: string;
  now(): string;
}

export type HandlerFailure = { ok: false; code: string; message: string; details?: Record<string, Json> };
export type HandlerOutcome = { ok: true; output: unknown; reads?: EntityRef[] } | HandlerFailure;
export type Found<T> = { ok: true; value: T } | HandlerFailure;

export const fail = (code: string, message: string, details?: Record<string, Json>): HandlerFailure => ({ ok: false, code, message, ...(details ? { details } : {}) });
export const found = <T>(value: T): Found<T> => ({ ok: true, value });
export const outOfScope = (what: string) => fail("out_of_scope", `${what} is outside this agent's categories`);

/** Journal failure codes as tool codes: a body the journal refuses is the caller's invalid argument. */
const CODE: Record<string, string> = { validation_failed: "invalid_arguments" };

/** A journal write's outcome as a handler value. */
export function written(result: WriteResult): Found<JournalRecord> {
  return result.ok ? found(result.record) : fail(CODE[result.code] ?? result.code, result.message);
}

/** A live record of `type` the agent may touch: `not_found` or `out_of_scope` otherwise. */
export function findInScope(ctx: HandlerContext, type: JournalType, id: string, field: string): Found<JournalRow> {
  const row = ctx.journal.rows.live(id, type);
  if (!row) return fail("not_found", `${field}: no ${type.replace("_", " ")} ${id} exists`);
  return ctx.scope.covers(row) ? found(row) : outOfScope(`${type.replace("_", " ")} ${id}`);
}

/**
 * The task a write names. Writes take ids only: a value that is no task id but reads like a
 * reference is `ambiguous_target` with the ranked in-scope candidates (never a guess), else `not_found`.
 */
export function findTask(ctx: HandlerContext, taskId: string, field: string): Found<JournalRow> {
  const row = ctx.journal.rows.live(taskId, "task");
  if (row) return ctx.scope.covers(row) ? found(row) : outOfScope(`task ${taskId}`);
  const ranked = rankTaskReferences(taskId, taskCandidates(ctx.journal.rows, ctx.scope.narrow(), true), 5);
  if (ranked.candidates.length === 0) return fail("not_found", `${field}: no task ${taskId} exists`);
  return fail("ambiguous_target", `${field} "${taskId}" is not a task id; resolve it and pass one of the candidates' taskId`, {
    field,
    candidates: ranked.candidates.map((candidate) => ({ taskId: candidate.taskId, title: candidate.title, score: candidate.score, reason: candidate.reason })),
  });
}

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

export const taskOut = (r: JournalRecord) => ({
  id: r.id,
  title: r.title,
  status: r.status,
  priority: r.priority,
  categoryId: r.categoryId,
  dueDate: str(r.dueDate),
  labels: Array.isArray(r.labels) ? r.labels : [],
});
export const checklistOut = (r: JournalRecord) => ({ id: r.id, taskId: r.taskId, title: r.title });
export const itemOut = (r: JournalRecord) => ({ id: r.id, checklistId: r.checklistId, text: r.text, done: r.done });
export const timeEntryOut = (r: JournalRecord) => ({ id: r.id, taskId: str(r.taskId), startedAt: r.startedAt, endedAt: str(r.endedAt), note: str(r.note) });
export const ratingOut = (r: JournalRecord) => ({ id: r.id, targetType: r.targetType, targetId: r.targetId, score: r.score, note: str(r.note) });

export const record = (row: JournalRow): JournalRecord => toRecord(row);
export const ref = (type: string, id: string): EntityRef => ({ type, id });

/** Live items of a checklist, oldest first. */
export function itemsOf(ctx: HandlerContext, checklistId: string): JournalRow[] {
  return ctx.journal.rows.liveChildren([checklistId]).filter((row) => row.type === "checklist_item");
}

/** Live checklists of a task, oldest first. */
export function checklistsOf(ctx: HandlerContext, taskId: string): JournalRow[] {
  return ctx.journal.rows.liveChildren([taskId]).filter((row) => row.type === "checklist");
}

/** Moves items onto `toChecklistId` (re-filed under its task's category); optionally reopens them. */
export function moveItems(ctx: HandlerContext, items: readonly JournalRow[], toChecklistId: string, preserveCheckedState: boolean): Found<JournalRecord[]> {
  const moved: JournalRecord[] = [];
  for (const item of items) {
    const patch = { version: item.version, checklistId: toChecklistId, ...(preserveCheckedState ? {} : { done: false }) };
    const result = written(ctx.journal.patch("checklist_item", item.id, patch));
    if (!result.ok) return result;
    moved.push(result.value);
  }
  return found(moved);
}

/** Closes a task (status, and a note appended to its notes); a no-op when nothing changes. */
export function closeTask(ctx: HandlerContext, task: JournalRow, status: "done" | "cancelled", note?: string): Found<JournalRecord> {
  const notes = typeof task.data.notes === "string" && task.data.notes.length > 0 ? task.data.notes : undefined;
  const appended = note === undefined || note.trim() === "" ? {} : { notes: notes ? `${notes}\n\n${note}` : note };
  return written(ctx.journal.patch("task", task.id, { version: task.version, status, ...appended }));
}

/** A tool's validated arguments (its input schema's output: defaults filled in). */
export type Args<N extends keyof ToolRegistry> = z.output<ToolRegistry[N]["inputSchema"]>;
