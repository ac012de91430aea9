/** Category and context reads (seed 000 §4.2): filtered to the agent's categories, never a write. */
import { z } from "zod";
import { rankTaskReferences } from "../../core/tools/task-reference";
import { decodeCursor, encodeCursor } from "../../schema/common";
import { fail, record, ref, taskOut, type Args, type HandlerContext, type HandlerOutcome } from "./context";
import { taskCandidates, tasksPage } from "./queries";

const CursorShape = z.object({ c: z.string(), i: z.string() });

export function listAllowedCategories(_args: Args<"list_allowed_categories">, ctx: HandlerContext): HandlerOutcome {
  const categories = ctx.journal.rows
    .liveMany(ctx.scope.narrow())
    .filter((row) => row.type === "category")
    .map((row) => ({ id: row.id, name: String(row.data.name), color: typeof row.data.color === "string" ? row.data.color : null }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
  return { ok: true, output: { categories }, reads: categories.map((category) => ref("category", category.id)) };
}

export function listTasksInScope(args: Args<"list_tasks_in_scope">, ctx: HandlerContext): HandlerOutcome {
  const after = decodeCursor(args.cursor, CursorShape);
  if (args.cursor && !after) return fail("invalid_arguments", "cursor is not a nextCursor this tool returned");
  const page = tasksPage(ctx.journal.rows, {
    categoryIds: ctx.scope.narrow(args.categoryIds),
    statuses: args.statuses,
    titleContains: args.query,
    dueBefore: args.dueBefore,
    limit: args.limit,
    after,
  });
  const tasks = page.rows.map((row) => taskOut(record(row)));
  return { ok: true, output: { tasks, nextCursor: page.last ? encodeCursor(page.last) : null }, reads: tasks.map((task) => ref("task", task.id)) };
}

/** Ranked candidates only: the caller picks one and passes its id to a write. */
export function resolveTaskReference(args: Args<"resolve_task_reference">, ctx: HandlerContext): HandlerOutcome {
  const categoryIds = ctx.scope.narrow(args.categoryIds);
  const candidates = taskCandidates(ctx.journal.rows, categoryIds, args.includeClosed);
  // An exact id always competes, even past the candidate window.
  const byId = ctx.journal.rows.live(args.reference.trim(), "task");
  const closed = (status: unknown) => status === "done" || status === "cancelled";
  if (byId && categoryIds.includes(byId.categoryId ?? "") && (args.includeClosed || !closed(byId.data.status))) {
    candidates.push({ id: byId.id, title: String(byId.data.title), status: String(byId.data.status), categoryId: byId.categoryId, updatedAt: byId.updatedAt });
  }
  const ranked = rankTaskReferences(args.reference, candidates, args.limit);
  return {
    ok: true,
    output: {
      candidates: ranked.candidates.map(({ taskId, title, categoryId, status, score, reason }) => ({ taskId, title, categoryId, status, score, reason })),
      ambiguous: ranked.ambiguous,
    },
    reads: ranked.candidates.map((candidate) => ref("task", candidate.taskId)),
  };
}
