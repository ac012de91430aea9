/**
 * Day planning (seed 000 §4.2, §4.3 `upsert_day_plan_blocks`). The journal keeps a block as
 * `{id, start, end, taskId?, categoryId?, label}` with wall-clock `HH:MM` on the plan's date; tools
 * speak `{id, categoryId, taskId, startTime, endTime, note}` with ISO instants in the tenant's zone
 * (`src/core/tools/day-plan-time.ts`). A block's category is its task's, else its own; an agent sees and
 * changes only blocks (and pinned tasks) of its categories. The note is stored as the label; without
 * one the label is the task's title or the category's name. Blocks and pins naming a deleted task
 * are dropped when a tool rewrites the plan (the journal refuses dangling references).
 */
import { blockClock, zonedInstant } from "../../core/tools/day-plan-time";
import type { JournalRow } from "../../objects/tenant/journal";
import { fail, findTask, found, outOfScope, written, type Args, type Found, type HandlerContext, type HandlerOutcome } from "./context";

interface Block {
  id: string;
  start: string;
  end: string;
  taskId?: string;
  categoryId?: string;
  label: string;
}
interface BlockInput {
  id?: string | undefined;
  categoryId?: string | undefined;
  taskId?: string | undefined;
  startTime: string;
  endTime: string;
  note?: string | undefined;
}
type Plan = { row: JournalRow; created: boolean; blocks: Block[]; pinned: string[]; taskCategory: Map<string, string | null> };

const NO_SCOPE = "day plans (this agent has no categories)";

export function getOrCreateDayPlan(args: Args<"get_or_create_day_plan">, ctx: HandlerContext): HandlerOutcome {
  const plan = ensurePlan(ctx, args.planDate);
  return plan.ok ? { ok: true, output: { dayPlan: planOut(ctx, plan.value), created: plan.value.created } } : plan;
}

export function upsertDayPlanBlocks(args: Args<"upsert_day_plan_blocks">, ctx: HandlerContext): HandlerOutcome {
  const plan = ensurePlan(ctx, args.planDate);
  if (!plan.ok) return plan;
  const blocks = [...plan.value.blocks];
  for (const upsert of args.upserts) {
    const index = blocks.findIndex((block) => block.id === upsert.id);
    if (index >= 0 && !visible(ctx, plan.value, blocks[index]!)) return outOfScope(`block ${upsert.id}`);
    const block = toBlock(ctx, args.planDate, upsert.id, upsert);
    if (!block.ok) return block;
    if (index >= 0) blocks[index] = block.value;
    else blocks.push(block.value);
  }
  for (const id of args.deletes) {
    const index = blocks.findIndex((block) => block.id === id);
    if (index < 0) return fail("not_found", `deletes: the plan of ${args.planDate} has no block ${id}`);
    if (!visible(ctx, plan.value, blocks[index]!)) return outOfScope(`block ${id}`);
    blocks.splice(index, 1);
  }
  const saved = savePlan(ctx, plan.value, blocks, plan.value.pinned);
  if (!saved.ok) return saved;
  return { ok: true, output: { dayPlan: planOut(ctx, saved.value), upsertedBlockIds: args.upserts.map((block) => block.id), deletedBlockIds: [...args.deletes] } };
}

export function pinDayPlanTasks(args: Args<"pin_day_plan_tasks">, ctx: HandlerContext): HandlerOutcome {
  const plan = ensurePlan(ctx, args.planDate);
  if (!plan.ok) return plan;
  const pinned = [...plan.value.pinned];
  for (const taskId of args.pin ?? []) {
    const task = findTask(ctx, taskId, "pin[]");
    if (!task.ok) return task;
    if (!pinned.includes(task.value.id)) pinned.push(task.value.id);
  }
  for (const taskId of args.unpin ?? []) {
    if (!pinned.includes(taskId)) continue;
    // A pin of a deleted task is dangling and may go; a live task's pin only from within scope.
    if (plan.value.taskCategory.has(taskId) && !ctx.scope.has(plan.value.taskCategory.get(taskId))) return outOfScope(`task ${taskId}`);
    pinned.splice(pinned.indexOf(taskId), 1);
  }
  const saved = savePlan(ctx, plan.value, plan.value.blocks, pinned);
  return saved.ok ? { ok: true, output: { dayPlan: planOut(ctx, saved.value) } } : saved;
}

/** The agent's blocks become exactly `blocks`; other agents' blocks stay untouched. */
export function replanDayBlocks(args: Args<"replan_day_blocks">, ctx: HandlerContext): HandlerOutcome {
  const plan = ensurePlan(ctx, args.planDate);
  if (!plan.ok) return plan;
  const mine = new Set(plan.value.blocks.filter((block) => visible(ctx, plan.value, block)).map((block) => block.id));
  const kept = plan.value.blocks.filter((block) => !mine.has(block.id));
  const layout: Block[] = [];
  const created: string[] = [];
  const moved: string[] = [];
  for (const [index, input] of args.blocks.entries()) {
    const id = input.id ?? `blk_${ctx.derive(`block:${plan.value.row.version}:${index}`).slice(0, 20)}`;
    if (kept.some((block) => block.id === id)) return outOfScope(`block ${id}`);
    if (layout.some((block) => block.id === id)) return fail("invalid_arguments", `blocks: block id ${id} appears twice`);
    const block = toBlock(ctx, args.planDate, id, input);
    if (!block.ok) return block;
    layout.push(block.value);
    (mine.has(id) ? moved : created).push(id);
  }
  const removed = [...mine].filter((id) => !layout.some((block) => block.id === id));
  const saved = savePlan(ctx, plan.value, [...kept, ...layout], plan.value.pinned);
  if (!saved.ok) return saved;
  return { ok: true, output: { dayPlan: planOut(ctx, saved.value), createdBlockIds: created, movedBlockIds: moved, removedBlockIds: removed } };
}

/** The plan of `date`, created empty when there is none. */
function ensurePlan(ctx: HandlerContext, date: string): Found<Plan> {
  if (ctx.scope.isEmpty) return outOfScope(NO_SCOPE);
  const row = ctx.journal.rows.findLive("day_plan", { date });
  if (row) return found(loadPlan(ctx, row, false));
  const made = written(ctx.journal.create("day_plan", { date }, ctx.newId("day_plan", "plan")));
  return made.ok ? found(loadPlan(ctx, ctx.journal.rows.live(made.value.id)!, true)) : made;
}

function loadPlan(ctx: HandlerContext, row: JournalRow, created: boolean): Plan {
  const blocks = (Array.isArray(row.data.blocks) ? row.data.blocks : []) as Block[];
  const pinned = (Array.isArray(row.data.pinnedTaskIds) ? row.data.pinnedTaskIds : []) as string[];
  const taskIds = [...blocks.flatMap((block) => (block.taskId ? [block.taskId] : [])), ...pinned];
  const taskCategory = new Map(ctx.journal.rows.liveMany(taskIds).filter((task) => task.type === "task").map((task) => [task.id, task.categoryId]));
  return { row, created, blocks, pinned, taskCategory };
}

/** A block's category: its task's (null when the task is gone), else its own. */
const categoryOf = (plan: Plan, block: Block): string | null => (block.taskId ? (plan.taskCategory.get(block.taskId) ?? null) : (block.categoryId ?? null));
const visible = (ctx: HandlerContext, plan: Plan, block: Block) => ctx.scope.has(categoryOf(plan, block));

function savePlan(ctx: HandlerContext, plan: Plan, blocks: Block[], pinned: string[]): Found<Plan> {
  const live = (block: Block) => !block.taskId || plan.taskCategory.has(block.taskId) || ctx.journal.rows.live(block.taskId, "task") !== undefined;
  const sorted = blocks.filter(live).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const pins = pinned.filter((taskId) => plan.taskCategory.has(taskId) || ctx.journal.rows.live(taskId, "task") !== undefined);
  const saved = written(ctx.journal.patch("day_plan", plan.row.id, { version: plan.row.version, blocks: sorted, pinnedTaskIds: pins }));
  return saved.ok ? found(loadPlan(ctx, ctx.journal.rows.live(saved.value.id)!, plan.created)) : saved;
}

/** A tool block as the journal stores it; the task and category must be in scope. */
function toBlock(ctx: HandlerContext, planDate: string, id: string, input: BlockInput): Found<Block> {
  const start = blockClock(input.startTime, planDate, ctx.timeZone);
  if (!start.ok) return fail("invalid_arguments", `startTime: ${start.message}`);
  const end = blockClock(input.endTime, planDate, ctx.timeZone);
  if (!end.ok) return fail("invalid_arguments", `endTime: ${end.message} (a block ends by 23:59 on its day)`);
  if (end.clock <= start.clock) return fail("invalid_arguments", "endTime must be after startTime");
  let label = input.note?.trim() ?? "";
  if (input.taskId !== undefined) {
    const task = findTask(ctx, input.taskId, "taskId");
    if (!task.ok) return task;
    if (input.categoryId !== undefined && input.categoryId !== task.value.categoryId) {
      return fail("invalid_arguments", `categoryId ${input.categoryId} is not the category of task ${task.value.id} (${task.value.categoryId})`);
    }
    label ||= String(task.value.data.title);
    return withLabel({ id, start: start.clock, end: end.clock, taskId: task.value.id, label });
  }
  if (!ctx.scope.has(input.categoryId)) return outOfScope(`category ${input.categoryId}`);
  const category = ctx.journal.rows.live(input.categoryId!, "category");
  if (!category) return fail("invalid_reference", `categoryId: no category ${input.categoryId} exists`);
  label ||= String(category.data.name);
  return withLabel({ id, start: start.clock, end: end.clock, categoryId: category.id, label });
}

function withLabel(block: Block): Found<Block> {
  if (block.label.length > 200) return fail("invalid_arguments", "note is stored as the block's label: at most 200 characters");
  return found(block);
}

function planOut(ctx: HandlerContext, plan: Plan) {
  const date = String(plan.row.data.date);
  const at = (clock: string) => zonedInstant(date, clock, ctx.timeZone);
  return {
    id: plan.row.id,
    planDate: date,
    blocks: plan.blocks
      .filter((block) => visible(ctx, plan, block))
      .map((block) => ({ id: block.id, categoryId: categoryOf(plan, block), taskId: block.taskId ?? null, startTime: at(block.start), endTime: at(block.end), note: block.label })),
    pinnedTaskIds: plan.pinned.filter((taskId) => ctx.scope.has(plan.taskCategory.get(taskId))),
  };
}

