import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import { ADMIN, api } from "./helpers";

type Json = Record<string, any>;
type Envelope = Json & { ok: boolean };

let counter = 0;
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
const newOperationId = () => sha256Hex(`op-${++counter}-${crypto.randomUUID()}`);

/** A fresh tenant (New York time) with a seeded journal: two categories in the agent's scope, one outside. */
async function world() {
  const res = await api("POST", "/v1/tenants", { key: ADMIN, body: { name: "tools", timeZone: "America/New_York" } });
  expect(res.status).toBe(201);
  const tenantId: string = res.body.tenant.id;
  const stub = tenantStub(env, tenantId);
  const durable = env.TENANT.get(env.TENANT.idFromName(tenantId));
  const create = async (type: string, body: Json): Promise<Json> => {
    const result = await stub.journalCreate(type as never, body);
    if (!result.ok) throw new Error(`${type}: ${result.message}`);
    return result.record as Json;
  };
  const gym = await create("category", { name: "Gym" });
  const work = await create("category", { name: "Work" });
  const secret = await create("category", { name: "Private" });
  const scope = [gym.id, work.id];

  const call = async (toolName: string, args: Json, options: { scope?: string[]; previewOnly?: boolean; operationId?: string; agentId?: string } = {}): Promise<Envelope> =>
    (await stub.executeTool({
      operationId: options.operationId ?? (await newOperationId()),
      agentId: options.agentId ?? "ag_coach",
      runKey: "r".repeat(64),
      toolName,
      args,
      scope: { allowedCategoryIds: options.scope ?? scope },
      previewOnly: options.previewOnly ?? false,
    })) as Envelope;
  const sql = (query: string, ...params: unknown[]) => runInDurableObject(durable, (_instance, state) => state.storage.sql.exec(query, ...params).toArray() as Json[]);
  const get = async (type: string, id: string) => {
    const result = await stub.journalGet(type as never, id);
    return result.ok ? (result.record as Json) : null;
  };
  /** Everything a write could touch: journal rows, change units, batches, applied operations. */
  const snapshot = async () => ({
    journal: await sql("SELECT id, version, deleted_at, data FROM journal_entities ORDER BY id"),
    units: (await sql("SELECT count(*) AS n FROM change_units"))[0]!.n,
    batches: (await sql("SELECT count(*) AS n FROM notification_batches"))[0]!.n,
    applied: (await sql("SELECT count(*) AS n FROM applied_operations"))[0]!.n,
  });
  return { tenantId, stub, create, call, sql, get, snapshot, gym, work, secret, scope };
}

const output = (envelope: Envelope) => {
  expect(envelope, JSON.stringify(envelope)).toMatchObject({ ok: true });
  return envelope.output as Json;
};
const refusal = (envelope: Envelope, code: string) => {
  expect(envelope, JSON.stringify(envelope)).toMatchObject({ ok: false, status: "error", code });
  return envelope;
};

describe("journal tools: reads are filtered by category scope", () => {
  it("list_allowed_categories lists the scope's categories by name; an empty scope lists none", async () => {
    const w = await world();
    expect(output(await w.call("list_allowed_categories", {})).categories).toEqual([
      { id: w.gym.id, name: "Gym", color: null },
      { id: w.work.id, name: "Work", color: null },
    ]);
    expect(output(await w.call("list_allowed_categories", {}, { scope: [] })).categories).toEqual([]);
  });

  it("list_tasks_in_scope hides other categories, pages newest first and filters", async () => {
    const w = await world();
    const squat = await w.create("task", { title: "Squat day", categoryId: w.gym.id });
    const report = await w.create("task", { title: "Write report", categoryId: w.work.id, status: "done", dueDate: "2026-03-01" });
    await w.create("task", { title: "Diary", categoryId: w.secret.id });
    const first = output(await w.call("list_tasks_in_scope", { limit: 1 }));
    expect(first.tasks.map((task: Json) => task.id)).toEqual([report.id]);
    const second = output(await w.call("list_tasks_in_scope", { limit: 1, cursor: first.nextCursor }));
    expect(second).toEqual({ tasks: [expect.objectContaining({ id: squat.id, title: "Squat day", status: "open", categoryId: w.gym.id, dueDate: null, labels: [] })], nextCursor: null });
    expect(output(await w.call("list_tasks_in_scope", { statuses: ["done"] })).tasks.map((task: Json) => task.id)).toEqual([report.id]);
    expect(output(await w.call("list_tasks_in_scope", { query: "SQUAT" })).tasks.map((task: Json) => task.id)).toEqual([squat.id]);
    expect(output(await w.call("list_tasks_in_scope", { dueBefore: "2026-03-31" })).tasks.map((task: Json) => task.id)).toEqual([report.id]);
    expect(output(await w.call("list_tasks_in_scope", { categoryIds: [w.secret.id] })).tasks).toEqual([]);
    expect(output(await w.call("list_tasks_in_scope", {}, { scope: [] })).tasks).toEqual([]);
  });

  it("resolve_task_reference ranks in-scope candidates deterministically and never writes", async () => {
    const w = await world();
    const exact = await w.create("task", { title: "Migration", categoryId: w.work.id });
    const prefix = await w.create("task", { title: "Migration rollback plan", categoryId: w.work.id });
    const words = await w.create("task", { title: "Test the db migration", categoryId: w.gym.id });
    await w.create("task", { title: "Migration", categoryId: w.secret.id });
    const before = await w.snapshot();
    const resolved = await w.call("resolve_task_reference", { reference: "migration" });
    const result = output(resolved);
    expect(result.candidates.map((candidate: Json) => candidate.taskId)).toEqual([exact.id, prefix.id, words.id]);
    expect(result.candidates[0]).toMatchObject({ title: "Migration", score: 0.95, reason: "exact title", status: "open", categoryId: w.work.id });
    expect(result.ambiguous).toBe(false);
    expect(output(await w.call("resolve_task_reference", { reference: "migration" }))).toEqual(result);
    expect(output(await w.call("resolve_task_reference", { reference: exact.id })).candidates[0]).toMatchObject({ taskId: exact.id, score: 1 });
    expect(resolved.links.every((link: Json) => link.effect === "read")).toBe(true);
    expect(resolved.changedEntityIds).toEqual([]);
    expect(await w.snapshot()).toEqual(before);
  });
});

describe("journal tools: writes", () => {
  it("create_task creates in scope, refuses other categories and bad arguments without writing", async () => {
    const w = await world();
    const created = await w.call("create_task", { title: "Deadlift PR", categoryId: w.gym.id, labels: ["strength"] });
    const task = output(created).task;
    expect(task).toMatchObject({ title: "Deadlift PR", status: "open", priority: "medium", categoryId: w.gym.id, labels: ["strength"] });
    expect(created.links).toEqual([{ relation: "tool_effect", target: { type: "task", id: task.id }, effect: "created" }]);
    expect(created.changedEntityIds).toEqual([`task:${task.id}`]);
    expect(created.changedTokens).toContain("semanticKey|-|TASK");
    const before = await w.snapshot();
    refusal(await w.call("create_task", { title: "Sneaky", categoryId: w.secret.id }), "out_of_scope");
    refusal(await w.call("create_task", { title: "Nowhere", categoryId: w.secret.id }, { scope: [] }), "out_of_scope");
    const invalid = refusal(await w.call("create_task", { categoryId: w.gym.id, smuggled: true }), "invalid_arguments");
    expect(invalid.details.issues.map((issue: Json) => issue.path)).toEqual(expect.arrayContaining(["title"]));
    const after = await w.snapshot();
    expect({ ...after, applied: 0 }).toEqual({ ...before, applied: 0 });
  });

  it("update_task_fields changes fields; a re-categorisation needs both ends in scope", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Plan week", categoryId: w.work.id, dueDate: "2026-05-01" });
    const updated = output(await w.call("update_task_fields", { taskId: task.id, fields: { priority: "high", dueDate: null, categoryId: w.gym.id } }));
    expect(updated.changedFields).toEqual(["categoryId", "dueDate", "priority"]);
    expect(updated.task).toMatchObject({ priority: "high", dueDate: null, categoryId: w.gym.id });
    refusal(await w.call("update_task_fields", { taskId: task.id, fields: { categoryId: w.secret.id } }), "out_of_scope");
    refusal(await w.call("update_task_fields", { taskId: task.id, fields: { title: "x" } }, { scope: [w.work.id] }), "out_of_scope");
    refusal(await w.call("update_task_fields", { taskId: task.id, fields: { title: "x" }, expectedVersion: 1 }), "version_conflict");
    expect((await w.get("task", task.id))!.categoryId).toBe(w.gym.id);
  });

  it("an ambiguous target never writes: a reference where an id belongs answers the ranked candidates", async () => {
    const w = await world();
    const a = await w.create("task", { title: "deploy", categoryId: w.work.id });
    const b = await w.create("task", { title: "deploy docs", categoryId: w.work.id });
    await w.create("task", { title: "deploy", categoryId: w.secret.id });
    const before = await w.snapshot();
    const ambiguous = refusal(await w.call("update_task_fields", { taskId: "deploy", fields: { status: "done" } }), "ambiguous_target");
    expect(ambiguous.details.candidates.map((candidate: Json) => candidate.taskId)).toEqual([a.id, b.id]);
    refusal(await w.call("create_checklist", { taskId: "deploy", title: "Steps" }), "ambiguous_target");
    refusal(await w.call("start_task_timer", { taskId: "nothing_like_it" }), "not_found");
    const after = await w.snapshot();
    expect(after.journal).toEqual(before.journal);
    expect([after.units, after.batches]).toEqual([before.units, before.batches]);
  });

  it("create_follow_up_task carries the open checklist items over and closes the source", async () => {
    const w = await world();
    const source = await w.create("task", { title: "Sprint 1", categoryId: w.work.id, labels: ["sprint"] });
    const list = await w.create("checklist", { taskId: source.id, title: "Stories" });
    const open1 = await w.create("checklist_item", { checklistId: list.id, text: "Login" });
    const done = await w.create("checklist_item", { checklistId: list.id, text: "Signup", done: true });
    const open2 = await w.create("checklist_item", { checklistId: list.id, text: "Logout" });
    const result = await w.call("create_follow_up_task", { sourceTaskId: source.id, newTaskTitle: "Sprint 2", closeSourceTaskAs: "done" });
    const out = output(result);
    expect(out.sourceTask).toMatchObject({ id: source.id, status: "done" });
    expect(out.followUpTask).toMatchObject({ title: "Sprint 2", status: "open", categoryId: w.work.id, labels: ["sprint"] });
    expect(out.carriedItemIds).toEqual([open1.id, open2.id]);
    const moved = (await w.get("checklist_item", open1.id))!;
    const newList = (await w.get("checklist", moved.checklistId))!;
    expect(newList).toMatchObject({ taskId: out.followUpTask.id, title: "Stories" });
    expect((await w.get("checklist_item", done.id))!.checklistId).toBe(list.id);
    const batches = await w.sql("SELECT source, authority, change_unit_keys FROM notification_batches WHERE source LIKE 'agent:%'");
    expect(batches).toHaveLength(1);
    expect(batches[0]).toMatchObject({ source: "agent:ag_coach", authority: "runtime_instruction" });
    expect(JSON.parse(batches[0]!.change_unit_keys)).toHaveLength(5);
  });

  it("the same operationId twice is one mutation with an identical envelope", async () => {
    const w = await world();
    const operationId = await newOperationId();
    const first = await w.call("create_task", { title: "Once", categoryId: w.gym.id }, { operationId });
    const before = await w.snapshot();
    const second = await w.call("create_task", { title: "Once", categoryId: w.gym.id }, { operationId });
    expect(second).toEqual(first);
    expect(await w.snapshot()).toEqual(before);
    expect(await w.sql("SELECT id FROM journal_entities WHERE type = 'task'")).toHaveLength(1);
    const stored = await w.sql("SELECT agent_id, tool_name, result FROM applied_operations WHERE operation_id = ?", operationId);
    expect(stored).toHaveLength(1);
    expect({ ...stored[0], result: JSON.parse(stored[0]!.result) }).toEqual({ agent_id: "ag_coach", tool_name: "create_task", result: first });
    // A refusal is an outcome too: recorded once, answered again unchanged.
    const refusedId = await newOperationId();
    const refused = await w.call("create_task", { title: "No", categoryId: w.secret.id }, { operationId: refusedId });
    expect(await w.call("create_task", { title: "No", categoryId: w.secret.id }, { operationId: refusedId, scope: [w.secret.id] })).toEqual(refused);
  });

  it("answers agent-side and unknown tools without touching the journal", async () => {
    const w = await world();
    refusal(await w.call("memory_search", { query: "x" }), "not_tenant_tool");
    refusal(await w.call("sleep", { durationSeconds: 60 }), "not_tenant_tool");
    refusal(await w.call("drop_tables", {}), "unknown_tool");
    refusal(await w.call("create_task", { title: "x", categoryId: w.gym.id }, { previewOnly: true }), "preview_not_supported");
  });
});

describe("journal tools: checklists, previews and cross-category moves", () => {
  it("create_checklist, add_multiple_checklist_items and update_checklist_items", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Leg day", categoryId: w.gym.id });
    const made = output(await w.call("create_checklist", { taskId: task.id, title: "Warm-up", items: [{ text: "Bike" }, { text: "Stretch", done: true }] }));
    expect(made.checklist).toMatchObject({ taskId: task.id, title: "Warm-up" });
    expect(made.items.map((item: Json) => [item.text, item.done])).toEqual([["Bike", false], ["Stretch", true]]);
    const added = output(await w.call("add_multiple_checklist_items", { checklistId: made.checklist.id, items: [{ text: "Squats" }] }));
    expect(added.items).toEqual([expect.objectContaining({ checklistId: made.checklist.id, text: "Squats", done: false })]);
    const updated = output(await w.call("update_checklist_items", { checklistId: made.checklist.id, updates: [{ itemId: made.items[0].id, done: true }, { itemId: added.items[0].id, text: "Front squats" }] }));
    expect(updated.items.map((item: Json) => [item.text, item.done])).toEqual([["Bike", true], ["Front squats", false]]);
    refusal(await w.call("update_checklist_items", { checklistId: made.checklist.id, updates: [{ itemId: "cli_unknown", done: true }, { itemId: made.items[1].id, done: false }] }), "not_found");
    expect((await w.get("checklist_item", made.items[1].id))!.done).toBe(true);
  });

  it("move_checklist_items needs both ends in scope; its preview is the exact effect, and apply does exactly that", async () => {
    const w = await world();
    const gymTask = await w.create("task", { title: "Gym", categoryId: w.gym.id });
    const workTask = await w.create("task", { title: "Work", categoryId: w.work.id });
    const secretTask = await w.create("task", { title: "Secret", categoryId: w.secret.id });
    const from = await w.create("checklist", { taskId: gymTask.id, title: "From" });
    const to = await w.create("checklist", { taskId: workTask.id, title: "To" });
    const hidden = await w.create("checklist", { taskId: secretTask.id, title: "Hidden" });
    const item = await w.create("checklist_item", { checklistId: from.id, text: "Carry me", done: true });
    const args = { itemIds: [item.id], fromChecklistId: from.id, toChecklistId: to.id, preserveCheckedState: false };

    const before = await w.snapshot();
    refusal(await w.call("move_checklist_items", { ...args, toChecklistId: hidden.id }), "out_of_scope");
    refusal(await w.call("move_checklist_items", args, { scope: [w.gym.id] }), "out_of_scope");
    const preview = await w.call("move_checklist_items", { ...args, previewOnly: true });
    expect(preview).toMatchObject({ ok: true, preview: true, changedEntityIds: [], changedTokens: [] });
    expect(output(preview).movedItems).toEqual([{ id: item.id, checklistId: to.id, text: "Carry me", done: false }]);
    expect(preview.links).toEqual([{ relation: "tool_effect", target: { type: "checklist_item", id: item.id }, effect: "updated" }]);
    const afterPreview = await w.snapshot();
    expect(afterPreview.journal).toEqual(before.journal);
    expect(afterPreview.batches).toBe(before.batches);
    expect(afterPreview.applied).toBe(before.applied + 2); // the two refusals, not the preview

    const applied = await w.call("move_checklist_items", args);
    expect(applied.output).toEqual(preview.output);
    expect(applied.links).toEqual(preview.links);
    expect(applied).toMatchObject({ preview: false, changedEntityIds: [`checklist_item:${item.id}`] });
    expect(await w.get("checklist_item", item.id)).toMatchObject({ checklistId: to.id, categoryId: w.work.id, done: false });
  });

  it("move_checklist_items_to_new_task previews the ids it will create", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Cardio", categoryId: w.gym.id });
    const from = await w.create("checklist", { taskId: task.id, title: "Plan" });
    const item = await w.create("checklist_item", { checklistId: from.id, text: "Run 5k" });
    const args = { itemIds: [item.id], fromChecklistId: from.id, newTaskTitle: "Running block", categoryId: w.work.id };
    refusal(await w.call("move_checklist_items_to_new_task", { ...args, categoryId: w.secret.id, previewOnly: true }), "out_of_scope");
    const preview = output(await w.call("move_checklist_items_to_new_task", { ...args, previewOnly: true }));
    expect(await w.get("task", preview.task.id)).toBeNull();
    const applied = output(await w.call("move_checklist_items_to_new_task", args));
    expect(applied).toEqual(preview);
    expect(applied.checklist).toMatchObject({ taskId: applied.task.id, title: "Plan" });
    expect(await w.get("checklist_item", item.id)).toMatchObject({ checklistId: applied.checklist.id, categoryId: w.work.id });
  });

  it("conclude_task_with_rollover: preview writes nothing; apply creates exactly the previewed task and moves", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Q1 goals", categoryId: w.work.id, labels: ["okr"] });
    const list = await w.create("checklist", { taskId: task.id, title: "Goals" });
    const open = await w.create("checklist_item", { checklistId: list.id, text: "Ship v2" });
    await w.create("checklist_item", { checklistId: list.id, text: "Hire", done: true });
    const args = { taskId: task.id, concludeAs: "done", rollover: { target: "new_task", title: "Q2 goals" }, note: "Rolled over" };
    const before = await w.snapshot();
    const preview = await w.call("conclude_task_with_rollover", { ...args, previewOnly: true });
    const planned = output(preview);
    expect(planned).toMatchObject({ concludedTask: { id: task.id, status: "done" }, rolloverTask: { title: "Q2 goals", categoryId: w.work.id, labels: ["okr"] }, movedItemIds: [open.id] });
    expect(preview.preview).toBe(true);
    expect(await w.snapshot()).toEqual(before);

    const applied = await w.call("conclude_task_with_rollover", args);
    expect(output(applied)).toEqual(planned);
    expect(applied.links.map((link: Json) => link.target)).toEqual(preview.links.map((link: Json) => link.target));
    expect((await w.get("task", task.id))!).toMatchObject({ status: "done", notes: "Rolled over" });
    expect((await w.get("task", planned.rolloverTask.id))!.title).toBe("Q2 goals");
    refusal(await w.call("conclude_task_with_rollover", { ...args, rollover: { target: "existing_task", taskId: "t_none" } }), "not_found");
  });
});

describe("journal tools: time, day plans, ratings", () => {
  it("logs retrospective time, runs one timer per task, stops and annotates it", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Migration", categoryId: w.work.id });
    const entry = output(await w.call("create_retrospective_time_entry", { taskId: task.id, startedAt: "2026-02-17T16:00:00-05:00", endedAt: "2026-02-17T18:00:00-05:00", description: "Implemented migration" }));
    expect(entry.timeEntry).toMatchObject({ taskId: task.id, startedAt: "2026-02-17T21:00:00.000Z", endedAt: "2026-02-17T23:00:00.000Z", note: "Implemented migration" });
    refusal(await w.call("create_retrospective_time_entry", { taskId: task.id, startedAt: "2026-02-17T18:00:00Z", endedAt: "2026-02-17T16:00:00Z" }), "invalid_arguments");
    const started = output(await w.call("start_task_timer", { taskId: task.id, startedAt: "2026-02-18T09:00:00Z" }));
    expect(started.timeEntry.endedAt).toBeNull();
    refusal(await w.call("start_task_timer", { taskId: task.id }), "timer_already_running");
    const stopped = output(await w.call("stop_task_timer", { taskId: task.id, endedAt: "2026-02-18T10:30:00Z" }));
    expect(stopped.timeEntry).toMatchObject({ id: started.timeEntry.id, endedAt: "2026-02-18T10:30:00.000Z" });
    refusal(await w.call("stop_task_timer", { timeEntryId: started.timeEntry.id }), "timer_not_running");
    const noted = output(await w.call("annotate_time_entry", { timeEntryId: entry.timeEntry.id, note: "and fixed a test" }));
    expect(noted.timeEntry.note).toBe("Implemented migration\nand fixed a test");
    refusal(await w.call("annotate_time_entry", { timeEntryId: entry.timeEntry.id, note: "x" }, { scope: [w.gym.id] }), "out_of_scope");
  });

  it("day plans: blocks map to tenant-local clocks; other categories' blocks stay hidden and untouched", async () => {
    const w = await world();
    const squat = await w.create("task", { title: "Squats", categoryId: w.gym.id });
    const diary = await w.create("task", { title: "Diary", categoryId: w.secret.id });
    const plan = await w.create("day_plan", { date: "2026-02-18", blocks: [{ id: "private-1", start: "07:00", end: "07:30", taskId: diary.id, label: "Write" }] });
    const got = output(await w.call("get_or_create_day_plan", { planDate: "2026-02-18" }));
    expect(got).toEqual({ dayPlan: { id: plan.id, planDate: "2026-02-18", blocks: [], pinnedTaskIds: [] }, created: false });
    refusal(await w.call("get_or_create_day_plan", { planDate: "2026-02-18" }, { scope: [] }), "out_of_scope");

    const upsert = await w.call("upsert_day_plan_blocks", {
      planDate: "2026-02-18",
      upserts: [
        { id: "block-1", categoryId: w.work.id, startTime: "2026-02-18T09:00:00-05:00", endTime: "2026-02-18T11:00:00-05:00", note: "Deep work" },
        { id: "block-2", taskId: squat.id, startTime: "2026-02-18T17:00:00Z", endTime: "2026-02-18T18:00:00Z" },
      ],
    });
    expect(output(upsert)).toEqual({
      dayPlan: {
        id: plan.id,
        planDate: "2026-02-18",
        blocks: [
          { id: "block-1", categoryId: w.work.id, taskId: null, startTime: "2026-02-18T09:00:00-05:00", endTime: "2026-02-18T11:00:00-05:00", note: "Deep work" },
          { id: "block-2", categoryId: w.gym.id, taskId: squat.id, startTime: "2026-02-18T12:00:00-05:00", endTime: "2026-02-18T13:00:00-05:00", note: "Squats" },
        ],
        pinnedTaskIds: [],
      },
      upsertedBlockIds: ["block-1", "block-2"],
      deletedBlockIds: [],
    });
    const stored = (await w.get("day_plan", plan.id))!;
    expect(stored.blocks).toEqual([
      { id: "private-1", start: "07:00", end: "07:30", taskId: diary.id, label: "Write" },
      { id: "block-1", start: "09:00", end: "11:00", categoryId: w.work.id, label: "Deep work" },
      { id: "block-2", start: "12:00", end: "13:00", taskId: squat.id, label: "Squats" },
    ]);
    refusal(await w.call("upsert_day_plan_blocks", { planDate: "2026-02-18", deletes: ["private-1"] }), "out_of_scope");
    refusal(await w.call("upsert_day_plan_blocks", { planDate: "2026-02-18", upserts: [{ id: "b3", categoryId: w.secret.id, startTime: "2026-02-18T13:00:00-05:00", endTime: "2026-02-18T14:00:00-05:00" }] }), "out_of_scope");
    refusal(await w.call("upsert_day_plan_blocks", { planDate: "2026-02-18", upserts: [{ id: "b3", categoryId: w.gym.id, startTime: "2026-02-19T13:00:00-05:00", endTime: "2026-02-19T14:00:00-05:00" }] }), "invalid_arguments");

    const pinned = output(await w.call("pin_day_plan_tasks", { planDate: "2026-02-18", pin: [squat.id] }));
    expect(pinned.dayPlan.pinnedTaskIds).toEqual([squat.id]);
    refusal(await w.call("pin_day_plan_tasks", { planDate: "2026-02-18", pin: [diary.id] }), "out_of_scope");
  });

  it("replan_day_blocks previews the new layout (with the ids it will create), then applies exactly it", async () => {
    const w = await world();
    await w.call("upsert_day_plan_blocks", {
      planDate: "2026-03-02",
      upserts: [
        { id: "keep", categoryId: w.work.id, startTime: "2026-03-02T09:00:00-05:00", endTime: "2026-03-02T10:00:00-05:00" },
        { id: "drop", categoryId: w.gym.id, startTime: "2026-03-02T18:00:00-05:00", endTime: "2026-03-02T19:00:00-05:00" },
      ],
    });
    const args = {
      planDate: "2026-03-02",
      blocks: [
        { id: "keep", categoryId: w.work.id, startTime: "2026-03-02T10:00:00-05:00", endTime: "2026-03-02T11:00:00-05:00" },
        { categoryId: w.gym.id, startTime: "2026-03-02T07:00:00-05:00", endTime: "2026-03-02T08:00:00-05:00", note: "Run" },
      ],
      reason: "meeting moved",
    };
    const preview = output(await w.call("replan_day_blocks", { ...args, previewOnly: true }));
    expect(preview).toMatchObject({ movedBlockIds: ["keep"], removedBlockIds: ["drop"], createdBlockIds: [expect.stringMatching(/^blk_[0-9a-f]{20}$/)] });
    const planBefore = output(await w.call("get_or_create_day_plan", { planDate: "2026-03-02" })).dayPlan;
    expect(planBefore.blocks.map((block: Json) => block.id)).toEqual(["keep", "drop"]);
    const applied = output(await w.call("replan_day_blocks", args));
    expect(applied).toEqual(preview);
    expect(applied.dayPlan.blocks.map((block: Json) => [block.id, block.startTime])).toEqual([
      [preview.createdBlockIds[0], "2026-03-02T07:00:00-05:00"],
      ["keep", "2026-03-02T10:00:00-05:00"],
    ]);
  });

  it("ratings: one per target, read back, summarised over the agent's categories only", async () => {
    const w = await world();
    const task = await w.create("task", { title: "Run", categoryId: w.gym.id });
    const hidden = await w.create("task", { title: "Diary", categoryId: w.secret.id });
    await w.create("rating", { targetType: "task", targetId: hidden.id, score: 1 });
    const first = output(await w.call("create_or_update_rating", { targetType: "task", targetId: task.id, score: 4, note: "good" }));
    expect(first).toMatchObject({ created: true, rating: { targetType: "task", targetId: task.id, score: 4, note: "good" } });
    const second = output(await w.call("create_or_update_rating", { targetType: "task", targetId: task.id, score: 5 }));
    expect(second).toMatchObject({ created: false, rating: { id: first.rating.id, score: 5, note: "good" } });
    expect(output(await w.call("get_rating_for_target", { targetType: "task", targetId: task.id })).rating).toEqual(second.rating);
    refusal(await w.call("get_rating_for_target", { targetType: "task", targetId: hidden.id }), "out_of_scope");
    refusal(await w.call("create_or_update_rating", { targetType: "task", targetId: hidden.id, score: 3 }), "out_of_scope");
    const today = new Date().toISOString().slice(0, 10);
    const summary = output(await w.call("get_ratings_summary", { from: "2020-01-01", to: "2099-12-31", targetTypes: ["task"] }));
    expect(summary).toEqual({ count: 1, average: 5, byScore: { 1: 0, 2: 0, 3: 0, 4: 0, 5: 1 }, byTargetType: { task: { count: 1, average: 5 } } });
    expect(output(await w.call("get_ratings_summary", { from: "2020-01-01", to: "2020-01-02" })).count).toBe(0);
    expect(output(await w.call("get_ratings_summary", { from: today, to: today }, { scope: [] })).count).toBe(0);
  });
});
