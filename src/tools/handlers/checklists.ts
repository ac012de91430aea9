/** Checklist lifecycle (seed 000 §4.2, §4.3 `move_checklist_items`). */
import type { JournalRecord } from "../../schema/agents/journal";
import type { JournalRow } from "../../objects/tenant/journal";
import {
  checklistOut,
  fail,
  findInScope,
  findTask,
  found,
  itemOut,
  itemsOf,
  moveItems,
  outOfScope,
  taskOut,
  written,
  type Args,
  type Found,
  type HandlerContext,
  type HandlerOutcome,
} from "./context";

export function createChecklist(args: Args<"create_checklist">, ctx: HandlerContext): HandlerOutcome {
  const task = findTask(ctx, args.taskId, "taskId");
  if (!task.ok) return task;
  const checklist = written(ctx.journal.create("checklist", { taskId: task.value.id, title: args.title }, ctx.newId("checklist", "checklist")));
  if (!checklist.ok) return checklist;
  const items = addItems(ctx, checklist.value.id, args.items);
  if (!items.ok) return items;
  return { ok: true, output: { checklist: checklistOut(checklist.value), items: items.value.map(itemOut) } };
}

export function addMultipleChecklistItems(args: Args<"add_multiple_checklist_items">, ctx: HandlerContext): HandlerOutcome {
  const checklist = findInScope(ctx, "checklist", args.checklistId, "checklistId");
  if (!checklist.ok) return checklist;
  const items = addItems(ctx, checklist.value.id, args.items);
  return items.ok ? { ok: true, output: { items: items.value.map(itemOut) } } : items;
}

/** Every item must belong to the checklist; one bad id fails the whole call (nothing applied). */
export function updateChecklistItems(args: Args<"update_checklist_items">, ctx: HandlerContext): HandlerOutcome {
  const checklist = findInScope(ctx, "checklist", args.checklistId, "checklistId");
  if (!checklist.ok) return checklist;
  const items = itemsIn(ctx, checklist.value, args.updates.map((update) => update.itemId), "updates[].itemId");
  if (!items.ok) return items;
  const updated: JournalRecord[] = [];
  for (const [index, update] of args.updates.entries()) {
    const item = items.value[index]!;
    const changes = { ...(update.text !== undefined ? { text: update.text } : {}), ...(update.done !== undefined ? { done: update.done } : {}) };
    const result = written(ctx.journal.patch("checklist_item", item.id, { version: item.version, ...changes }));
    if (!result.ok) return result;
    updated.push(result.value);
  }
  return { ok: true, output: { items: updated.map(itemOut) } };
}

/** Both checklists must be in scope (a move across categories needs both ends). */
export function moveChecklistItems(args: Args<"move_checklist_items">, ctx: HandlerContext): HandlerOutcome {
  const from = findInScope(ctx, "checklist", args.fromChecklistId, "fromChecklistId");
  if (!from.ok) return from;
  const to = findInScope(ctx, "checklist", args.toChecklistId, "toChecklistId");
  if (!to.ok) return to;
  const items = itemsIn(ctx, from.value, args.itemIds, "itemIds");
  if (!items.ok) return items;
  const moved = moveItems(ctx, items.value, to.value.id, args.preserveCheckedState);
  return moved.ok ? { ok: true, output: { movedItems: moved.value.map(itemOut) } } : moved;
}

/** A new task (source task's category unless `categoryId`) with one new checklist receiving the items. */
export function moveChecklistItemsToNewTask(args: Args<"move_checklist_items_to_new_task">, ctx: HandlerContext): HandlerOutcome {
  const from = findInScope(ctx, "checklist", args.fromChecklistId, "fromChecklistId");
  if (!from.ok) return from;
  const items = itemsIn(ctx, from.value, args.itemIds, "itemIds");
  if (!items.ok) return items;
  const categoryId = args.categoryId ?? from.value.categoryId;
  if (!ctx.scope.has(categoryId)) return outOfScope(`category ${categoryId}`);
  const task = written(ctx.journal.create("task", { title: args.newTaskTitle, categoryId }, ctx.newId("task", "task")));
  if (!task.ok) return task;
  const title = args.newChecklistTitle ?? from.value.data.title;
  const checklist = written(ctx.journal.create("checklist", { taskId: task.value.id, title }, ctx.newId("checklist", "checklist")));
  if (!checklist.ok) return checklist;
  const moved = moveItems(ctx, items.value, checklist.value.id, args.preserveCheckedState);
  if (!moved.ok) return moved;
  return { ok: true, output: { task: taskOut(task.value), checklist: checklistOut(checklist.value), movedItems: moved.value.map(itemOut) } };
}

function addItems(ctx: HandlerContext, checklistId: string, items: ReadonlyArray<{ text: string; done: boolean }>): Found<JournalRecord[]> {
  const created: JournalRecord[] = [];
  for (const [index, item] of items.entries()) {
    const result = written(ctx.journal.create("checklist_item", { checklistId, text: item.text, done: item.done }, ctx.newId("checklist_item", `item:${index}`)));
    if (!result.ok) return result;
    created.push(result.value);
  }
  return found(created);
}

/** The named items, in the order given, each a live item of `checklist`. */
function itemsIn(ctx: HandlerContext, checklist: JournalRow, itemIds: readonly string[], field: string): Found<JournalRow[]> {
  const byId = new Map(itemsOf(ctx, checklist.id).map((item) => [item.id, item]));
  const missing = itemIds.filter((id) => !byId.has(id));
  if (missing.length > 0) return fail("not_found", `${field}: ${missing.join(", ")} ${missing.length === 1 ? "is not an item" : "are not items"} of checklist ${checklist.id}`, { missingItemIds: missing });
  return found(itemIds.map((id) => byId.get(id)!));
}
