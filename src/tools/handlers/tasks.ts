/** Task lifecycle (seed 000 §4.2, §4.3 `create_follow_up_task`): create, change, follow up, conclude. */
import type { JournalRecord } from "../../schema/agents/journal";
import type { JournalRow } from "../../objects/tenant/journal";
import {
  checklistsOf,
  closeTask,
  fail,
  findTask,
  found,
  itemsOf,
  moveItems,
  outOfScope,
  record,
  taskOut,
  written,
  type Args,
  type Found,
  type HandlerContext,
  type HandlerOutcome,
} from "./context";

export function createTask(args: Args<"create_task">, ctx: HandlerContext): HandlerOutcome {
  if (!ctx.scope.has(args.categoryId)) return outOfScope(`category ${args.categoryId}`);
  const { title, categoryId, status, priority, labels, estimateMinutes, dueDate, notes } = args;
  const body = { title, categoryId, status, priority, labels, estimateMinutes, dueDate, notes };
  const task = written(ctx.journal.create("task", body, ctx.newId("task", "task")));
  return task.ok ? { ok: true, output: { task: taskOut(task.value) } } : task;
}

/** A re-categorisation needs both the current and the new category in scope. */
export function updateTaskFields(args: Args<"update_task_fields">, ctx: HandlerContext): HandlerOutcome {
  const task = findTask(ctx, args.taskId, "taskId");
  if (!task.ok) return task;
  const row = task.value;
  if (args.expectedVersion !== undefined && args.expectedVersion !== row.version) {
    return fail("version_conflict", `task ${row.id} is at version ${row.version}, not ${args.expectedVersion}; re-read it and retry`, { currentVersion: row.version });
  }
  const target = args.fields.categoryId;
  if (target !== undefined && target !== row.categoryId && !ctx.scope.has(target)) return outOfScope(`category ${target}`);
  const result = ctx.journal.patch("task", row.id, { ...args.fields, version: row.version });
  const updated = written(result);
  if (!updated.ok) return updated;
  const changedFields = result.ok && result.write ? [...result.write.changedFields] : [];
  return { ok: true, output: { task: taskOut(updated.value), changedFields } };
}

/** The next task after a source: open checklist items move over (one checklist per source checklist). */
export function createFollowUpTask(args: Args<"create_follow_up_task">, ctx: HandlerContext): HandlerOutcome {
  const source = findTask(ctx, args.sourceTaskId, "sourceTaskId");
  if (!source.ok) return source;
  const categoryId = args.preserveCategoryAndLabels ? source.value.categoryId : (args.categoryId ?? null);
  if (!ctx.scope.has(categoryId)) return outOfScope(`category ${categoryId}`);
  const labels = args.preserveCategoryAndLabels && Array.isArray(source.value.data.labels) ? source.value.data.labels : [];
  const followUp = written(ctx.journal.create("task", { title: args.newTaskTitle, categoryId, labels }, ctx.newId("task", "follow-up")));
  if (!followUp.ok) return followUp;
  const carried = args.carryOverOpenChecklistItems ? carryOpenItems(ctx, source.value, followUp.value.id, "follow-up") : found([]);
  if (!carried.ok) return carried;
  let sourceAfter = record(ctx.journal.rows.live(source.value.id)!);
  if (args.closeSourceTaskAs) {
    const closed = closeTask(ctx, ctx.journal.rows.live(source.value.id)!, args.closeSourceTaskAs);
    if (!closed.ok) return closed;
    sourceAfter = closed.value;
  }
  return { ok: true, output: { sourceTask: taskOut(sourceAfter), followUpTask: taskOut(followUp.value), carriedItemIds: carried.value.map((item) => item.id) } };
}

/** Close a task; its open items go to a new task, an existing one, or stay where they are (`none`). */
export function concludeTaskWithRollover(args: Args<"conclude_task_with_rollover">, ctx: HandlerContext): HandlerOutcome {
  const task = findTask(ctx, args.taskId, "taskId");
  if (!task.ok) return task;
  let rolloverTask: JournalRecord | null = null;
  let moved: JournalRecord[] = [];
  const rollover = args.rollover;
  if (rollover.target === "new_task") {
    const labels = Array.isArray(task.value.data.labels) ? task.value.data.labels : [];
    const body = { title: rollover.title, categoryId: task.value.categoryId, labels, dueDate: rollover.dueDate };
    const created = written(ctx.journal.create("task", body, ctx.newId("task", "rollover")));
    if (!created.ok) return created;
    const carried = carryOpenItems(ctx, task.value, created.value.id, "rollover");
    if (!carried.ok) return carried;
    rolloverTask = created.value;
    moved = carried.value;
  } else if (rollover.target === "existing_task") {
    const target = findTask(ctx, rollover.taskId, "rollover.taskId");
    if (!target.ok) return target;
    if (target.value.id === task.value.id) return fail("invalid_arguments", "rollover.taskId must differ from taskId");
    const carried = carryOpenItems(ctx, task.value, target.value.id, "rollover", true);
    if (!carried.ok) return carried;
    rolloverTask = record(ctx.journal.rows.live(target.value.id)!);
    moved = carried.value;
  }
  const closed = closeTask(ctx, ctx.journal.rows.live(task.value.id)!, args.concludeAs, args.note);
  if (!closed.ok) return closed;
  return {
    ok: true,
    output: { concludedTask: taskOut(closed.value), rolloverTask: rolloverTask ? taskOut(rolloverTask) : null, movedItemIds: moved.map((item) => item.id) },
  };
}

/**
 * Moves the open items of `source`'s checklists onto `targetTaskId`: into a new checklist of the
 * same title per source checklist, or (`reuseByTitle`) into the target's first checklist of that title.
 */
function carryOpenItems(ctx: HandlerContext, source: JournalRow, targetTaskId: string, label: string, reuseByTitle = false): Found<JournalRecord[]> {
  const carried: JournalRecord[] = [];
  const targetChecklists = reuseByTitle ? checklistsOf(ctx, targetTaskId) : [];
  for (const checklist of checklistsOf(ctx, source.id)) {
    const open = itemsOf(ctx, checklist.id).filter((item) => item.data.done !== true);
    if (open.length === 0) continue;
    let destinationId = targetChecklists.find((candidate) => candidate.data.title === checklist.data.title)?.id;
    if (destinationId === undefined) {
      const created = written(ctx.journal.create("checklist", { taskId: targetTaskId, title: checklist.data.title }, ctx.newId("checklist", `${label}:${checklist.id}`)));
      if (!created.ok) return created;
      destinationId = created.value.id;
    }
    const moved = moveItems(ctx, open, destinationId, true);
    if (!moved.ok) return moved;
    carried.push(...moved.value);
  }
  return found(carried);
}
