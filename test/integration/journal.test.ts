import { OpenAPIHono } from "@hono/zod-openapi";
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { journalRoutes } from "../../src/routes/agents/journal";
import { api, createAgent, createTenant } from "./helpers";

type Json = Record<string, any>;
interface Token {
  tokenClass: string;
  tokenNamespace?: string;
  tokenValue: string;
}
interface Batch {
  logicalChangeKey: string;
  changeUnitKeys: string[];
  tokens: Token[];
  origin: string;
  source: string;
  authority: string;
  dispatchedAt: string | null;
}
interface Unit {
  counter: number;
  changeUnitKey: string;
  logicalChangeKey: string;
  origin: string;
  hostId: string;
  payloadType: string;
  payloadId: string;
}

const SEMANTIC_KEY: Record<string, string> = {
  category: "CATEGORY",
  task: "TASK",
  checklist: "CHECKLIST",
  checklist_item: "CHECKLIST",
  time_entry: "TIME_ENTRY",
  day_plan: "DAY_PLAN",
  rating: "RATING",
  entry: "ENTRY",
};

/** Reads the tenant DO's own SQLite (notification_batches, change_units, journal_entities). */
async function sql<T = Json>(tenantId: string, query: string, ...params: unknown[]): Promise<T[]> {
  const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
  return runInDurableObject(stub, (_instance, state) => state.storage.sql.exec(query, ...params).toArray() as T[]);
}

async function batches(tenantId: string): Promise<Batch[]> {
  const rows = await sql(tenantId, "SELECT * FROM notification_batches ORDER BY rowid");
  return rows.map((row) => ({
    logicalChangeKey: row.logical_change_key,
    changeUnitKeys: JSON.parse(row.change_unit_keys),
    tokens: JSON.parse(row.tokens),
    origin: row.origin,
    source: row.source,
    authority: row.authority,
    dispatchedAt: row.dispatched_at,
  }));
}

async function units(tenantId: string): Promise<Unit[]> {
  const rows = await sql(tenantId, "SELECT * FROM change_units ORDER BY counter");
  return rows.map((row) => ({
    counter: row.counter,
    changeUnitKey: row.change_unit_key,
    logicalChangeKey: row.logical_change_key,
    origin: row.origin,
    hostId: row.host_id,
    payloadType: row.payload_type,
    payloadId: row.payload_id,
  }));
}

/** Seed 000's derivation, recomputed here independently of src/core. */
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
const unitKey = (tenantId: string, counter: number, payloadId: string) => sha256Hex(`v1|local|${tenantId}|${counter}|journalEntity|${payloadId}`);
async function logicalChangeKey(unitKeys: string[]): Promise<string> {
  return sha256Hex("v1|" + [...new Set(unitKeys)].sort().join(","));
}

const tokenKeys = (tokens: Token[]) => tokens.map((token) => `${token.tokenClass}|${token.tokenNamespace ?? "-"}|${token.tokenValue}`).sort();

async function create(key: string, path: string, body: Json): Promise<Json> {
  const res = await api("POST", `/v1/journal/${path}`, { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function patch(key: string, path: string, id: string, body: Json): Promise<Json> {
  const res = await api("PATCH", `/v1/journal/${path}/${id}`, { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function get(key: string, path: string, id: string) {
  return api("GET", `/v1/journal/${path}/${id}`, { key });
}

async function list(key: string, path: string, query = ""): Promise<Json[]> {
  const res = await api("GET", `/v1/journal/${path}${query}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** A category, a task in it and a checklist on the task. */
async function seedTree(key: string) {
  const category = await create(key, "categories", { name: "Gym", color: "#22aa55" });
  const task = await create(key, "tasks", { title: "Leg day", categoryId: category.id });
  const checklist = await create(key, "checklists", { taskId: task.id, title: "Warm-up" });
  return { category, task, checklist };
}

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
}

type Tree = Awaited<ReturnType<typeof seedTree>>;
const KINDS: Array<{ path: string; type: string; body: (tree: Tree) => Json; change: (tree: Tree) => Json; expectCreated: (tree: Tree) => Json; cleared?: string[] }> = [
  {
    path: "categories",
    type: "category",
    body: () => ({ name: "Focus", color: "#112233" }),
    change: () => ({ name: "Deep focus", color: null }),
    expectCreated: () => ({ name: "Focus", color: "#112233" }),
    cleared: ["color"],
  },
  {
    path: "tasks",
    type: "task",
    body: (t) => ({ title: "Write report", categoryId: t.category.id, dueDate: "2026-03-01", labels: ["work", "work", "writing"], estimateMinutes: 90 }),
    change: () => ({ status: "in_progress", priority: "urgent", estimateMinutes: null }),
    expectCreated: (t) => ({ categoryId: t.category.id, status: "open", priority: "medium", labels: ["work", "writing"], dueDate: "2026-03-01", estimateMinutes: 90 }),
    cleared: ["estimateMinutes"],
  },
  {
    path: "checklists",
    type: "checklist",
    body: (t) => ({ taskId: t.task.id, title: "Cool-down" }),
    change: () => ({ title: "Cool-down and stretch" }),
    expectCreated: (t) => ({ taskId: t.task.id, categoryId: t.category.id }),
  },
  {
    path: "checklist-items",
    type: "checklist_item",
    body: (t) => ({ checklistId: t.checklist.id, text: "Ten squats" }),
    change: () => ({ done: true, text: "Twenty squats" }),
    expectCreated: (t) => ({ checklistId: t.checklist.id, done: false, categoryId: t.category.id }),
  },
  {
    path: "time-entries",
    type: "time_entry",
    body: (t) => ({ taskId: t.task.id, startedAt: "2026-02-17T16:00:00-05:00" }),
    change: () => ({ endedAt: "2026-02-17T23:00:00.000Z", note: "done" }),
    expectCreated: (t) => ({ taskId: t.task.id, categoryId: t.category.id, startedAt: "2026-02-17T21:00:00.000Z" }),
  },
  {
    path: "day-plans",
    type: "day_plan",
    body: (t) => ({ date: "2026-02-18", blocks: [{ id: "b1", start: "09:00", end: "11:00", taskId: t.task.id, label: "Deep work" }], pinnedTaskIds: [t.task.id] }),
    change: () => ({ pinnedTaskIds: [], blocks: [] }),
    expectCreated: (t) => ({ date: "2026-02-18", categoryId: null, pinnedTaskIds: [t.task.id] }),
  },
  {
    path: "ratings",
    type: "rating",
    body: (t) => ({ targetType: "task", targetId: t.task.id, score: 4 }),
    change: () => ({ score: 5, note: "great session" }),
    expectCreated: (t) => ({ targetType: "task", targetId: t.task.id, score: 4, categoryId: t.category.id }),
  },
  {
    path: "entries",
    type: "entry",
    body: (t) => ({ text: "Felt strong today", categoryId: t.category.id, occurredAt: "2026-02-17T08:00:00+01:00" }),
    change: () => ({ text: "Felt very strong", occurredAt: null }),
    expectCreated: (t) => ({ categoryId: t.category.id, occurredAt: "2026-02-17T07:00:00.000Z" }),
    cleared: ["occurredAt"],
  },
];

describe("journal CRUD", () => {
  it.each(KINDS)("creates, reads, lists, patches and soft-deletes $path, one notification batch per write", async (kind) => {
    const { tenantId, key } = await createTenant();
    const tree = await seedTree(key);
    const created = await create(key, kind.path, kind.body(tree));
    expect(created).toMatchObject({ type: kind.type, version: 1, ...kind.expectCreated(tree) });
    expect(Object.keys(created).slice(0, 6)).toEqual(["id", "type", "categoryId", "version", "createdAt", "updatedAt"]);
    expect(created.createdAt).toBe(created.updatedAt);
    expect((await get(key, kind.path, created.id)).body).toEqual(created);
    expect((await list(key, kind.path)).map((record) => record.id)).toContain(created.id);

    const changed = await patch(key, kind.path, created.id, { version: 1, ...kind.change(tree) });
    const expected = Object.fromEntries(Object.entries(kind.change(tree)).filter(([, value]) => value !== null));
    expect(changed).toMatchObject({ id: created.id, version: 2, createdAt: created.createdAt, ...expected });
    for (const field of kind.cleared ?? []) expect(changed).not.toHaveProperty(field);
    expect((await get(key, kind.path, created.id)).body).toEqual(changed);

    const deleted = await api("DELETE", `/v1/journal/${kind.path}/${created.id}?version=2`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.id, version: 3 });
    expect(deleted.body.deletedAt).toEqual(expect.any(String));
    expectProblem(await get(key, kind.path, created.id), 404, "not_found");
    expect((await list(key, kind.path)).map((record) => record.id)).not.toContain(created.id);

    // 3 seeded writes + create, patch, delete: six batches, six change units, counters 1..6.
    const recorded = await batches(tenantId);
    const written = await units(tenantId);
    expect(recorded).toHaveLength(6);
    expect(written.map((unit) => unit.counter)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const [index, unit] of written.entries()) {
      expect(unit).toMatchObject({ origin: "local", hostId: tenantId, payloadType: "journalEntity" });
      expect(unit.changeUnitKey).toBe(await unitKey(tenantId, unit.counter, unit.payloadId));
      expect(recorded[index]!.logicalChangeKey).toBe(await logicalChangeKey([unit.changeUnitKey]));
      expect(recorded[index]).toMatchObject({ origin: "local", source: "journal", authority: "operator_instruction", changeUnitKeys: [unit.changeUnitKey] });
    }
    expect(written.slice(3).map((unit) => unit.payloadId)).toEqual([created.id, created.id, created.id]);
    for (const [offset, op] of ["create", "update", "delete"].entries()) {
      const keys = tokenKeys(recorded[3 + offset]!.tokens);
      expect(keys).toEqual(expect.arrayContaining([`semanticKey|-|${SEMANTIC_KEY[kind.type]}`, `subtypeToken|journal.op|${op}`, `subtypeToken|journal.type|${kind.type}`, `entityId|-|${created.id}`]));
    }
  });
});

describe("journal placement and references", () => {
  it("files children under their parent's category and re-files the subtree when a task moves", async () => {
    const { tenantId, key } = await createTenant();
    const { category, task, checklist } = await seedTree(key);
    const other = await create(key, "categories", { name: "Work" });
    const item = await create(key, "checklist-items", { checklistId: checklist.id, text: "Squats" });
    const entry = await create(key, "time-entries", { taskId: task.id, startedAt: "2026-02-17T10:00:00Z", endedAt: "2026-02-17T11:00:00Z" });
    const taskRating = await create(key, "ratings", { targetType: "task", targetId: task.id, score: 3 });
    const entryRating = await create(key, "ratings", { targetType: "time_entry", targetId: entry.id, score: 5 });
    for (const record of [checklist, item, entry, taskRating, entryRating]) expect(record.categoryId).toBe(category.id);

    const before = await batches(tenantId);
    const moved = await patch(key, "tasks", task.id, { version: 1, categoryId: other.id });
    expect(moved).toMatchObject({ categoryId: other.id, version: 2 });
    for (const [path, record] of [["checklists", checklist], ["checklist-items", item], ["time-entries", entry], ["ratings", taskRating], ["ratings", entryRating]] as const) {
      expect((await get(key, path, record.id)).body).toMatchObject({ categoryId: other.id, version: record.version + 1 });
    }
    expect((await list(key, "checklist-items", `?categoryId=${other.id}`)).map((r) => r.id)).toEqual([item.id]);

    // One batch for the whole move: a change unit per rewritten record, consecutive counters.
    const after = await batches(tenantId);
    expect(after).toHaveLength(before.length + 1);
    const batch = after.at(-1)!;
    const moveUnits = (await units(tenantId)).filter((unit) => unit.logicalChangeKey === batch.logicalChangeKey);
    expect(moveUnits.map((unit) => unit.payloadId).sort()).toEqual([task.id, checklist.id, item.id, entry.id, taskRating.id, entryRating.id].sort());
    expect(moveUnits.map((unit) => unit.counter)).toEqual([...moveUnits.keys()].map((i) => moveUnits[0]!.counter + i));
    expect(batch.changeUnitKeys).toEqual(moveUnits.map((unit) => unit.changeUnitKey).sort());
    expect(batch.logicalChangeKey).toBe(await logicalChangeKey(moveUnits.map((unit) => unit.changeUnitKey)));
    expect(tokenKeys(batch.tokens)).toEqual(
      expect.arrayContaining([
        "semanticKey|-|TASK",
        "semanticKey|-|CHECKLIST",
        "semanticKey|-|TIME_ENTRY",
        "semanticKey|-|RATING",
        `entityId|-|${category.id}`,
        `entityId|-|${other.id}`,
        `entityId|-|${item.id}`,
        "subtypeToken|task.field|categoryId",
        "subtypeToken|journal.op|update",
      ]),
    );
  });

  it("moves a checklist item to another checklist and takes that task's category", async () => {
    const { key } = await createTenant();
    const { checklist } = await seedTree(key);
    const work = await create(key, "categories", { name: "Work" });
    const otherTask = await create(key, "tasks", { title: "Report", categoryId: work.id });
    const otherList = await create(key, "checklists", { taskId: otherTask.id, title: "Steps" });
    const item = await create(key, "checklist-items", { checklistId: checklist.id, text: "Draft", done: true });
    const moved = await patch(key, "checklist-items", item.id, { version: 1, checklistId: otherList.id });
    expect(moved).toMatchObject({ checklistId: otherList.id, categoryId: work.id, done: true, version: 2 });
  });

  it("keeps a time entry's category when it is detached from its task, and checks an explicit one", async () => {
    const { key } = await createTenant();
    const { category, task } = await seedTree(key);
    const work = await create(key, "categories", { name: "Work" });
    expectProblem(await api("POST", "/v1/journal/time-entries", { key, body: { taskId: task.id, categoryId: work.id, startedAt: "2026-02-17T10:00:00Z" } }), 422, "invalid_reference");
    const entry = await create(key, "time-entries", { taskId: task.id, categoryId: category.id, startedAt: "2026-02-17T10:00:00Z" });
    expect(entry).toMatchObject({ categoryId: category.id, taskId: task.id });
    const detached = await patch(key, "time-entries", entry.id, { version: 1, taskId: null });
    expect(detached).toMatchObject({ categoryId: category.id, version: 2 });
    expect(detached).not.toHaveProperty("taskId");
    const note = await create(key, "entries", { text: "Worked 2h on the report" });
    const loose = await create(key, "time-entries", { startedAt: "2026-02-17T12:00:00Z", sourceEntryId: note.id });
    expect(loose).toMatchObject({ categoryId: null, sourceEntryId: note.id });
    expectProblem(await api("POST", "/v1/journal/time-entries", { key, body: { startedAt: "2026-02-17T12:00:00Z", sourceEntryId: task.id } }), 422, "invalid_reference");
    const filed = await create(key, "time-entries", { categoryId: work.id, startedAt: "2026-02-17T12:00:00Z" });
    expect(await patch(key, "time-entries", filed.id, { version: 1, taskId: task.id })).toMatchObject({ taskId: task.id, categoryId: category.id });
  });

  it("rejects references to records that do not exist, are deleted or are of another kind with 422 invalid_reference", async () => {
    const { tenantId, key } = await createTenant();
    const { category, task, checklist } = await seedTree(key);
    const gone = await create(key, "categories", { name: "Old" });
    expect((await api("DELETE", `/v1/journal/categories/${gone.id}?version=1`, { key })).status).toBe(200);
    const count = (await batches(tenantId)).length;
    const cases: Array<[string, Json, string]> = [
      ["tasks", { title: "x", categoryId: "cat_missing" }, "categoryId"],
      ["tasks", { title: "x", categoryId: gone.id }, "categoryId"],
      ["tasks", { title: "x", categoryId: task.id }, "categoryId"],
      ["checklists", { taskId: category.id, title: "x" }, "taskId"],
      ["checklist-items", { checklistId: task.id, text: "x" }, "checklistId"],
      ["time-entries", { taskId: "task_missing", startedAt: "2026-02-17T10:00:00Z" }, "taskId"],
      ["day-plans", { date: "2026-02-18", blocks: [{ id: "a", start: "09:00", end: "10:00", label: "x", taskId: checklist.id }] }, "blocks.0.taskId"],
      ["day-plans", { date: "2026-02-18", pinnedTaskIds: [task.id, "task_missing"] }, "pinnedTaskIds.1"],
      ["ratings", { targetType: "time_entry", targetId: task.id, score: 3 }, "targetId"],
      ["entries", { text: "x", categoryId: "cat_missing" }, "categoryId"],
    ];
    for (const [path, body, field] of cases) {
      const res = await api("POST", `/v1/journal/${path}`, { key, body });
      expectProblem(res, 422, "invalid_reference");
      expect(res.body.detail).toContain(field);
    }
    expectProblem(await api("PATCH", `/v1/journal/checklists/${checklist.id}`, { key, body: { version: 1, taskId: "task_missing" } }), 422, "invalid_reference");
    expect(await batches(tenantId)).toHaveLength(count);
  });

  it("keeps one day plan per date and one rating per target", async () => {
    const { key } = await createTenant();
    const { task } = await seedTree(key);
    const plan = await create(key, "day-plans", { date: "2026-02-18" });
    expectProblem(await api("POST", "/v1/journal/day-plans", { key, body: { date: "2026-02-18" } }), 409, "conflict");
    await create(key, "ratings", { targetType: "task", targetId: task.id, score: 2 });
    expectProblem(await api("POST", "/v1/journal/ratings", { key, body: { targetType: "task", targetId: task.id, score: 4 } }), 409, "conflict");
    const other = await create(key, "day-plans", { date: "2026-02-19" });
    expectProblem(await api("PATCH", `/v1/journal/day-plans/${other.id}`, { key, body: { version: 1, date: "2026-02-18" } }), 409, "conflict");
    expect((await api("DELETE", `/v1/journal/day-plans/${plan.id}?version=1`, { key })).status).toBe(200);
    expect((await patch(key, "day-plans", other.id, { version: 1, date: "2026-02-18" })).date).toBe("2026-02-18");
  });
});

describe("journal lists", () => {
  it("pages with an opaque keyset cursor, oldest first, without gaps or repeats", async () => {
    const { key } = await createTenant();
    const category = await create(key, "categories", { name: "Gym" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(key, "tasks", { title: `Task ${i}`, categoryId: category.id })).id);
    const seen: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api("GET", `/v1/journal/tasks?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((task) => task.id).sort()).toEqual([...ids].sort());
    // Oldest first; records created in the same millisecond are ordered by id.
    const order = (a: Json, b: Json) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1);
    expect(seen).toEqual([...seen].sort(order));
    expectProblem(await api("GET", "/v1/journal/tasks?cursor=not-a-cursor", { key }), 400, "validation_failed");
    expectProblem(await api("GET", "/v1/journal/tasks?limit=0", { key }), 400, "validation_failed");
  });

  it("filters tasks by category and status, children by parent, day plans by date, ratings by target", async () => {
    const { key } = await createTenant();
    const { category, task, checklist } = await seedTree(key);
    const work = await create(key, "categories", { name: "Work" });
    const done = await create(key, "tasks", { title: "Shipped", categoryId: work.id, status: "done" });
    const other = await create(key, "tasks", { title: "Other", categoryId: work.id });
    const otherList = await create(key, "checklists", { taskId: other.id, title: "Other list" });
    const item = await create(key, "checklist-items", { checklistId: checklist.id, text: "a" });
    await create(key, "checklist-items", { checklistId: otherList.id, text: "b" });
    const entry = await create(key, "time-entries", { taskId: task.id, startedAt: "2026-02-17T10:00:00Z" });
    await create(key, "time-entries", { taskId: other.id, startedAt: "2026-02-17T10:00:00Z" });
    const plan = await create(key, "day-plans", { date: "2026-02-18" });
    await create(key, "day-plans", { date: "2026-02-19" });
    const rating = await create(key, "ratings", { targetType: "task", targetId: done.id, score: 5 });
    await create(key, "ratings", { targetType: "day_plan", targetId: plan.id, score: 3 });

    const ids = async (path: string, query: string) => (await list(key, path, query)).map((record) => record.id);
    expect(await ids("tasks", `?categoryId=${category.id}`)).toEqual([task.id]);
    expect(await ids("tasks", "?status=done")).toEqual([done.id]);
    expect(await ids("tasks", `?status=open&categoryId=${work.id}`)).toEqual([other.id]);
    expect(await ids("checklists", `?taskId=${other.id}`)).toEqual([otherList.id]);
    expect(await ids("checklist-items", `?checklistId=${checklist.id}`)).toEqual([item.id]);
    expect(await ids("time-entries", `?taskId=${task.id}`)).toEqual([entry.id]);
    expect(await ids("day-plans", "?date=2026-02-18")).toEqual([plan.id]);
    expect(await ids("ratings", `?targetId=${done.id}`)).toEqual([rating.id]);
    expect(await ids("ratings", "?targetType=task")).toEqual([rating.id]);
    expectProblem(await api("GET", "/v1/journal/tasks?status=finished", { key }), 400, "validation_failed");
    expectProblem(await api("GET", "/v1/journal/day-plans?date=2026-02-30", { key }), 400, "validation_failed");
  });
});

describe("journal concurrency and deletion", () => {
  it("answers 409 version_conflict for a stale version and writes nothing", async () => {
    const { tenantId, key } = await createTenant();
    const { task } = await seedTree(key);
    await patch(key, "tasks", task.id, { version: 1, title: "Leg day (heavy)" });
    const count = (await batches(tenantId)).length;
    const stale = await api("PATCH", `/v1/journal/tasks/${task.id}`, { key, body: { version: 1, title: "Lost update" } });
    expectProblem(stale, 409, "version_conflict");
    expect(stale.body.detail).toContain("version 2");
    expectProblem(await api("DELETE", `/v1/journal/tasks/${task.id}?version=1`, { key }), 409, "version_conflict");
    expectProblem(await api("PATCH", `/v1/journal/tasks/${task.id}`, { key, body: { title: "No version" } }), 400, "validation_failed");
    expectProblem(await api("DELETE", `/v1/journal/tasks/${task.id}`, { key }), 400, "validation_failed");
    expect((await get(key, "tasks", task.id)).body).toMatchObject({ title: "Leg day (heavy)", version: 2 });
    expect(await batches(tenantId)).toHaveLength(count);
  });

  it("treats a patch that changes nothing as no write: same version, no batch", async () => {
    const { tenantId, key } = await createTenant();
    const { task } = await seedTree(key);
    const count = (await batches(tenantId)).length;
    const same = await patch(key, "tasks", task.id, { version: 1, title: "Leg day", labels: [] });
    expect(same).toEqual(task);
    expect(await batches(tenantId)).toHaveLength(count);
  });

  it("soft-deletes a task with its checklists, items, time entries and ratings, keeping tombstones", async () => {
    const { tenantId, key } = await createTenant();
    const { category, task, checklist } = await seedTree(key);
    const item = await create(key, "checklist-items", { checklistId: checklist.id, text: "a" });
    const entry = await create(key, "time-entries", { taskId: task.id, startedAt: "2026-02-17T10:00:00Z" });
    const rating = await create(key, "ratings", { targetType: "time_entry", targetId: entry.id, score: 4 });

    expectProblem(await api("DELETE", `/v1/journal/categories/${category.id}?version=1`, { key }), 409, "conflict");
    const deleted = await api("DELETE", `/v1/journal/tasks/${task.id}?version=1`, { key });
    expect(deleted.status).toBe(200);
    for (const [path, record] of [["tasks", task], ["checklists", checklist], ["checklist-items", item], ["time-entries", entry], ["ratings", rating]] as const) {
      expectProblem(await get(key, path, record.id), 404, "not_found");
    }
    expectProblem(await api("PATCH", `/v1/journal/tasks/${task.id}`, { key, body: { version: 2, title: "x" } }), 404, "not_found");
    expectProblem(await api("DELETE", `/v1/journal/tasks/${task.id}?version=2`, { key }), 404, "not_found");
    const tombstones = await sql(tenantId, "SELECT id, version, deleted_at FROM journal_entities WHERE deleted_at IS NOT NULL ORDER BY id");
    expect(tombstones.map((row) => row.id).sort()).toEqual([task.id, checklist.id, item.id, entry.id, rating.id].sort());
    const batch = (await batches(tenantId)).at(-1)!;
    expect(batch.changeUnitKeys).toHaveLength(5);
    expect(tokenKeys(batch.tokens)).toEqual(expect.arrayContaining(["subtypeToken|journal.op|delete", "semanticKey|-|RATING", `entityId|-|${rating.id}`]));
    // With nothing filed under it any more, the category can go.
    expect((await api("DELETE", `/v1/journal/categories/${category.id}?version=1`, { key })).status).toBe(200);
  });
});

describe("journal notifications", () => {
  it("emits the kind key, subtype tokens and related entity ids of each write", async () => {
    const { tenantId, key } = await createTenant();
    const { category, task, checklist } = await seedTree(key);
    const item = await create(key, "checklist-items", { checklistId: checklist.id, text: "Squats" });
    await patch(key, "tasks", task.id, { version: 1, status: "done" });
    const recorded = await batches(tenantId);
    const [, taskCreated, , itemCreated, statusChanged] = recorded.map((batch) => tokenKeys(batch.tokens));
    expect(taskCreated).toEqual(
      [`entityId|-|${category.id}`, `entityId|-|${task.id}`, "semanticKey|-|TASK", "subtypeToken|journal.op|create", "subtypeToken|journal.type|task", "subtypeToken|task.priority|medium", "subtypeToken|task.status|open"].sort(),
    );
    expect(itemCreated).toEqual(
      [
        `entityId|-|${category.id}`,
        `entityId|-|${checklist.id}`,
        `entityId|-|${item.id}`,
        `entityId|-|${task.id}`,
        "semanticKey|-|CHECKLIST",
        "subtypeToken|checklist_item.done|false",
        "subtypeToken|journal.op|create",
        "subtypeToken|journal.type|checklist_item",
      ].sort(),
    );
    expect(statusChanged).toEqual(
      [`entityId|-|${category.id}`, `entityId|-|${task.id}`, "semanticKey|-|TASK", "subtypeToken|journal.op|update", "subtypeToken|journal.type|task", "subtypeToken|task.field|status", "subtypeToken|task.status|done"].sort(),
    );
    // Every batch was handed to dispatch after its commit.
    expect(recorded.every((batch) => batch.dispatchedAt !== null)).toBe(true);
  });

  it("keeps change-unit counters monotonic across writes and kinds", async () => {
    const { tenantId, key } = await createTenant();
    const { task } = await seedTree(key);
    await create(key, "time-entries", { taskId: task.id, startedAt: "2026-02-17T10:00:00Z" });
    await create(key, "entries", { text: "note" });
    await patch(key, "tasks", task.id, { version: 1, priority: "high" });
    const counters = (await units(tenantId)).map((unit) => unit.counter);
    expect(counters).toEqual([1, 2, 3, 4, 5, 6]);
    const keys = (await batches(tenantId)).map((batch) => batch.logicalChangeKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("replays a POST with the same Idempotency-Key without a second record or batch", async () => {
    const { tenantId, key } = await createTenant();
    const category = await create(key, "categories", { name: "Gym" });
    const body = { title: "Once", categoryId: category.id };
    const first = await api("POST", "/v1/journal/tasks", { key, body, headers: { "idempotency-key": "task-once" } });
    const again = await api("POST", "/v1/journal/tasks", { key, body, headers: { "idempotency-key": "task-once" } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await list(key, "tasks")).toHaveLength(1);
    expect(await batches(tenantId)).toHaveLength(2);
    expectProblem(await api("POST", "/v1/journal/tasks", { key, body: { ...body, title: "Twice" }, headers: { "idempotency-key": "task-once" } }), 409, "idempotency_conflict");
  });
});

describe("journal input, auth and tenancy", () => {
  it("answers bad input with 4xx problem+json naming the fields, never 500", async () => {
    const { key } = await createTenant();
    const { category, task } = await seedTree(key);
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "tasks", { title: "x", categoryId: category.id, colour: "red" }, "colour"],
      ["POST", "tasks", { categoryId: category.id }, "title is required"],
      ["POST", "tasks", { title: "  ", categoryId: category.id }, "title must not be empty"],
      ["POST", "tasks", { title: "x", categoryId: category.id, status: "finished" }, "status must be one of"],
      ["POST", "tasks", { title: "x", categoryId: category.id, dueDate: "2026-02-30" }, "dueDate must be a real calendar date"],
      ["POST", "tasks", { title: "x", categoryId: category.id, estimateMinutes: 1.5 }, "estimateMinutes"],
      ["POST", "tasks", { title: "x", categoryId: "../etc" }, "categoryId must be an id"],
      ["POST", "categories", { name: "x", color: "red" }, "color must be a colour"],
      ["POST", "time-entries", { startedAt: "2026-02-17T10:00:00Z", endedAt: "2026-02-17T09:00:00Z" }, "endedAt must not be before startedAt"],
      ["POST", "time-entries", { startedAt: "yesterday" }, "startedAt must be an ISO-8601 timestamp"],
      ["POST", "day-plans", { date: "2026-02-18", blocks: [{ id: "a", start: "10:00", end: "09:00", label: "x" }] }, "end must be after start"],
      ["POST", "day-plans", { date: "2026-02-18", blocks: [{ id: "a", start: "25:00", end: "26:00", label: "x" }] }, "start must be a time HH:MM"],
      ["POST", "day-plans", { date: "2026-02-18", pinnedTaskIds: [task.id, task.id] }, "pinnedTaskIds must not repeat an id"],
      ["POST", "ratings", { targetType: "task", targetId: task.id, score: 6 }, "score must be from 1 to 5"],
      ["POST", "ratings", { targetType: "category", targetId: category.id, score: 3 }, "targetType must be one of"],
      ["POST", "entries", [], "(root)"],
      ["PATCH", `tasks/${task.id}`, { version: 1, categoryId: null }, "categoryId"],
      ["PATCH", `tasks/${task.id}`, { version: "1", title: "x" }, "version"],
      ["PATCH", `ratings/${task.id}`, { version: 1, targetId: "x" }, "targetId"],
      ["PATCH", `time-entries/te_x`, { version: 1, startedAt: "2026-02-17T10:00:00Z", endedAt: "2026-02-17T09:00:00Z" }, "endedAt"],
    ];
    for (const [method, path, body, needle] of cases) {
      const res = await api(method, `/v1/journal/${path}`, { key, body });
      expectProblem(res, 400, "validation_failed");
      expect(JSON.stringify(res.body), `${method} ${path} ${JSON.stringify(body)}`).toContain(needle);
    }
    const patchedBadly = await api("PATCH", `/v1/journal/tasks/${task.id}`, { key, body: { version: 1, dueDate: "soon" } });
    expect(patchedBadly.body.errors).toEqual([{ path: "dueDate", message: "dueDate must be a date (YYYY-MM-DD)" }]);
    expectProblem(await api("POST", "/v1/journal/tasks", { key, body: "{not json" }), 400, "invalid_json");
    expectProblem(await api("POST", "/v1/journal/tasks", { key, body: "title=x", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    expectProblem(await api("GET", "/v1/journal/tasks/bad.id", { key }), 400, "validation_failed");
    expectProblem(await api("GET", "/v1/journal/tasks/task_missing", { key }), 404, "not_found");
    expectProblem(await api("GET", `/v1/journal/checklists/${task.id}`, { key }), 404, "not_found");
  });

  it("needs the journal scopes on an API key; widget tokens get 403, no credentials 401", async () => {
    const { key } = await createTenant();
    const { task } = await seedTree(key);
    const readOnly = await api("POST", "/v1/keys", { key, body: { name: "reader", scopes: ["journal:read"] } });
    const agentsOnly = await api("POST", "/v1/keys", { key, body: { name: "agents", scopes: ["agents:read", "agents:write"] } });
    expect((await get(readOnly.body.key, "tasks", task.id)).status).toBe(200);
    expectProblem(await api("POST", "/v1/journal/tasks", { key: readOnly.body.key, body: { title: "x", categoryId: task.categoryId } }), 403, "forbidden");
    expectProblem(await api("DELETE", `/v1/journal/tasks/${task.id}?version=1`, { key: readOnly.body.key }), 403, "forbidden");
    expectProblem(await get(agentsOnly.body.key, "tasks", task.id), 403, "forbidden");

    const agent = await createAgent(key);
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "user-1", agents: [agent.id] } });
    expect(minted.status).toBe(201);
    expectProblem(await get(minted.body.token, "tasks", task.id), 403, "forbidden");
    expectProblem(await api("GET", "/v1/journal/tasks", { key: minted.body.token }), 403, "forbidden");
    expectProblem(await api("PATCH", `/v1/journal/tasks/${task.id}`, { key: minted.body.token, body: { version: 1, title: "x" } }), 403, "forbidden");
    expectProblem(await api("GET", "/v1/journal/tasks"), 401, "unauthorized");
  });

  it("isolates tenants: another tenant's records are 404 and cannot be referenced", async () => {
    const a = await createTenant("a");
    const b = await createTenant("b");
    const { category, task } = await seedTree(a.key);
    expectProblem(await get(b.key, "tasks", task.id), 404, "not_found");
    expectProblem(await api("PATCH", `/v1/journal/tasks/${task.id}`, { key: b.key, body: { version: 1, title: "mine now" } }), 404, "not_found");
    expectProblem(await api("DELETE", `/v1/journal/tasks/${task.id}?version=1`, { key: b.key }), 404, "not_found");
    expect(await list(b.key, "tasks")).toEqual([]);
    expectProblem(await api("POST", "/v1/journal/tasks", { key: b.key, body: { title: "x", categoryId: category.id } }), 422, "invalid_reference");
    expect((await get(a.key, "tasks", task.id)).body).toEqual(task);
    expect(await batches(b.tenantId)).toHaveLength(0);
  });

  it("documents every journal route in the OpenAPI document", () => {
    // Generated from the journal router alone, so another module's schema cannot mask a journal regression.
    const app = new OpenAPIHono();
    app.route("/", journalRoutes);
    const doc: any = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "journal", version: "1" } });
    for (const path of ["categories", "tasks", "checklists", "checklist-items", "time-entries", "day-plans", "ratings", "entries"]) {
      expect(Object.keys(doc.paths[`/v1/journal/${path}`])).toEqual(expect.arrayContaining(["get", "post"]));
      expect(Object.keys(doc.paths[`/v1/journal/${path}/{id}`])).toEqual(expect.arrayContaining(["get", "patch", "delete"]));
    }
    expect(doc.components.schemas.JournalTaskCreate.properties.status.enum).toEqual(["open", "in_progress", "blocked", "done", "cancelled"]);
    // A record extends the named JournalRecordBase (allOf with a $ref): its required fields are those of every part.
    const requiredOf = (schema: any): string[] => (schema.$ref ? requiredOf(doc.components.schemas[schema.$ref.split("/").pop()]) : [...(schema.required ?? []), ...(schema.allOf ?? []).flatMap(requiredOf)]);
    expect(requiredOf(doc.components.schemas.JournalTask)).toEqual(expect.arrayContaining(["id", "type", "categoryId", "version", "createdAt", "updatedAt"]));
  });
});
