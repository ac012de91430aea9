/** Time capture (seed 000 §4.2, §4.3 `create_retrospective_time_entry`). A time entry's category is its task's. */
import type { JournalRow } from "../../objects/tenant/journal";
import { fail, findInScope, findTask, found, outOfScope, timeEntryOut, written, type Args, type Found, type HandlerContext, type HandlerOutcome } from "./context";

export function createRetrospectiveTimeEntry(args: Args<"create_retrospective_time_entry">, ctx: HandlerContext): HandlerOutcome {
  const task = findTask(ctx, args.taskId, "taskId");
  if (!task.ok) return task;
  if (args.sourceEntryId !== undefined) {
    // Only provenance is recorded, but an entry filed under another agent's category stays out of reach.
    const source = ctx.journal.rows.live(args.sourceEntryId, "entry");
    if (source && source.categoryId !== null && !ctx.scope.has(source.categoryId)) return outOfScope(`entry ${args.sourceEntryId}`);
  }
  const body = { taskId: task.value.id, startedAt: args.startedAt, endedAt: args.endedAt, note: args.description, sourceEntryId: args.sourceEntryId };
  const entry = written(ctx.journal.create("time_entry", body, ctx.newId("time_entry", "entry")));
  return entry.ok ? { ok: true, output: { timeEntry: timeEntryOut(entry.value) } } : entry;
}

/** One running entry per task: a second start is `timer_already_running`. */
export function startTaskTimer(args: Args<"start_task_timer">, ctx: HandlerContext): HandlerOutcome {
  const task = findTask(ctx, args.taskId, "taskId");
  if (!task.ok) return task;
  const running = runningEntry(ctx, task.value.id);
  if (running) return fail("timer_already_running", `task ${task.value.id} already has a running time entry (${running.id}); stop it first`, { timeEntryId: running.id });
  const body = { taskId: task.value.id, startedAt: args.startedAt ?? ctx.now(), note: args.note };
  const entry = written(ctx.journal.create("time_entry", body, ctx.newId("time_entry", "entry")));
  return entry.ok ? { ok: true, output: { timeEntry: timeEntryOut(entry.value) } } : entry;
}

export function stopTaskTimer(args: Args<"stop_task_timer">, ctx: HandlerContext): HandlerOutcome {
  const entry = runningTarget(ctx, args);
  if (!entry.ok) return entry;
  const endedAt = args.endedAt ?? ctx.now();
  if (Date.parse(endedAt) < Date.parse(String(entry.value.data.startedAt))) {
    return fail("invalid_arguments", `endedAt must not be before the entry's startedAt ${String(entry.value.data.startedAt)}`);
  }
  const stopped = written(ctx.journal.patch("time_entry", entry.value.id, { version: entry.value.version, endedAt }));
  return stopped.ok ? { ok: true, output: { timeEntry: timeEntryOut(stopped.value) } } : stopped;
}

export function annotateTimeEntry(args: Args<"annotate_time_entry">, ctx: HandlerContext): HandlerOutcome {
  const entry = findInScope(ctx, "time_entry", args.timeEntryId, "timeEntryId");
  if (!entry.ok) return entry;
  const current = typeof entry.value.data.note === "string" ? entry.value.data.note : "";
  const note = args.mode === "replace" || current === "" ? args.note : `${current}\n${args.note}`;
  if (note.length > 2_000) return fail("invalid_arguments", "the annotated note would exceed 2000 characters; use mode replace");
  const annotated = written(ctx.journal.patch("time_entry", entry.value.id, { version: entry.value.version, note }));
  return annotated.ok ? { ok: true, output: { timeEntry: timeEntryOut(annotated.value) } } : annotated;
}

function runningEntry(ctx: HandlerContext, taskId: string): JournalRow | undefined {
  return ctx.journal.rows.liveChildren([taskId]).find((row) => row.type === "time_entry" && row.data.endedAt === undefined);
}

function runningTarget(ctx: HandlerContext, args: Args<"stop_task_timer">): Found<JournalRow> {
  if (args.timeEntryId !== undefined) {
    const entry = findInScope(ctx, "time_entry", args.timeEntryId, "timeEntryId");
    if (!entry.ok) return entry;
    return entry.value.data.endedAt === undefined ? entry : fail("timer_not_running", `time entry ${entry.value.id} is already stopped`);
  }
  const task = findTask(ctx, args.taskId!, "taskId");
  if (!task.ok) return task;
  const running = runningEntry(ctx, task.value.id);
  return running ? found(running) : fail("timer_not_running", `task ${task.value.id} has no running time entry`);
}
