import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import { tokens, type TypedToken } from "../../src/core/wakes/tokens";
import * as schema from "../../src/db/tenant-schema";
import { chunkJobs, Dispatcher, fitJob, QUEUE_LIMITS } from "../../src/objects/tenant/alertness/dispatcher";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import type { WakeJob } from "../../src/schema/agents/wake";
import { api, createAgent, createTenant, eventually } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));
const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

/** Polls the agent DO directly: HTTP polling would spend the key's 100 requests per minute. */
async function settled(tenantId: string, agentId: string, runKey: string): Promise<any> {
  return eventually(async () => {
    const result: any = await agentDo(tenantId, agentId).getRun(runKey);
    return result.ok && !["queued", "running"].includes(result.run.status) ? result.run : undefined;
  }, 15_000);
}

const runsOf = async (tenantId: string, agentId: string): Promise<any[]> => ((await agentDo(tenantId, agentId).listRuns({ limit: 100 })) as any).data;

interface TaskWrite {
  id: string;
  categoryId: string;
  title: string;
}

/**
 * Stands in for a journal write (the journal routes are built separately): the entity row and its
 * notification batch in one transaction, then the TenantDO's own dispatch, exactly as a writer does.
 */
async function writeTask(tenantId: string, task: TaskWrite, options: { dispatch?: boolean } = {}): Promise<string> {
  return runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
    const now = new Date().toISOString();
    const recorded = instance.parts.db.transaction((tx) => {
      tx.insert(schema.journalEntities)
        .values({ id: task.id, type: "task", categoryId: task.categoryId, parentId: null, version: 1, data: { title: task.title }, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: schema.journalEntities.id, set: { categoryId: task.categoryId, data: { title: task.title }, updatedAt: now } })
        .run();
      const batchTokens: TypedToken[] = [tokens.semanticKey("TASK"), tokens.entityId(task.id), tokens.subtype("task.categoryId", task.categoryId)];
      return instance.parts.notifications.recordLocal(tx as never, [{ payloadType: "journalEntity", payloadId: task.id }], batchTokens, { source: "journal", authority: "runtime_instruction" });
    });
    if (options.dispatch !== false) await instance.parts.dispatcher.dispatchPending();
    return recorded.batch.logicalChangeKey;
  });
}

async function subscribe(key: string, agentId: string, body: Record<string, unknown>): Promise<any> {
  const res = await api("POST", `/v1/agents/${agentId}/subscriptions`, { key, body });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const batchRow = (tenantId: string, logicalChangeKey: string) =>
  runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) =>
    instance.parts.db.select().from(schema.notificationBatches).where(eq(schema.notificationBatches.logicalChangeKey, logicalChangeKey)).get(),
  );

const indexRowCount = (tenantId: string, subscriptionId: string) =>
  runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => instance.parts.subscriptions.indexRowsOf(subscriptionId).length);


const TASK = { tokenClass: "semanticKey", tokenValue: "TASK" };

describe("subscriptions: CRUD and validation", () => {
  it("creates, lists and deletes a subscription, keeping the token index in step", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const created = await api("POST", `/v1/agents/${agent.id}/subscriptions`, {
      key,
      body: {
        tokens: [TASK, { tokenClass: "subtypeToken", tokenNamespace: "task.categoryId", tokenValue: "gym" }, TASK],
        predicate: { eq: ["task.categoryId", "gym"] },
        eligibility: { activeFrom: "2020-01-01T00:00:00.000Z" },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agentId: agent.id, predicate: { eq: ["task.categoryId", "gym"] }, eligibility: { activeFrom: "2020-01-01T00:00:00.000Z" } });
    expect(created.body.id).toMatch(/^sub_/);
    // Stored canonical: deduplicated and sorted by tokenKey.
    expect(created.body.tokens).toEqual([TASK, { tokenClass: "subtypeToken", tokenNamespace: "task.categoryId", tokenValue: "gym" }]);
    expect(await indexRowCount(tenantId, created.body.id)).toBe(2);

    const listed = await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [created.body], nextCursor: null });

    const deleted = await api("DELETE", `/v1/agents/${agent.id}/subscriptions/${created.body.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(created.body.id);
    expect(await indexRowCount(tenantId, created.body.id)).toBe(0);
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key })).body.data).toEqual([]);
    expect((await api("DELETE", `/v1/agents/${agent.id}/subscriptions/${created.body.id}`, { key })).status).toBe(404);
    // Tombstoned, not erased.
    const row = await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) =>
      instance.parts.db.select().from(schema.subscriptions).where(eq(schema.subscriptions.id, created.body.id)).get(),
    );
    expect(row?.deletedAt).toEqual(expect.any(String));
  });

  it("pages subscriptions oldest first", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const ids = [];
    for (const value of ["A", "B", "C"]) ids.push((await subscribe(key, agent.id, { tokens: [{ tokenClass: "semanticKey", tokenValue: value }] })).id);
    const first = await api("GET", `/v1/agents/${agent.id}/subscriptions?limit=2`, { key });
    const second = await api("GET", `/v1/agents/${agent.id}/subscriptions?limit=2&cursor=${first.body.nextCursor}`, { key });
    expect([...first.body.data, ...second.body.data].map((s: any) => s.id).sort()).toEqual([...ids].sort());
    expect(second.body.nextCursor).toBeNull();
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions?cursor=garbage`, { key })).status).toBe(400);
  });

  it.each([
    ["no tokens", { tokens: [] }, "tokens"],
    ["33 tokens", { tokens: Array.from({ length: 33 }, (_, i) => ({ tokenClass: "semanticKey", tokenValue: `K${i}` })) }, "tokens"],
    ["a subtypeToken without namespace", { tokens: [{ tokenClass: "subtypeToken", tokenValue: "gym" }] }, "tokens.0"],
    ["a semanticKey with a namespace", { tokens: [{ tokenClass: "semanticKey", tokenNamespace: "x", tokenValue: "TASK" }] }, "tokens.0"],
    ["an unknown token class", { tokens: [{ tokenClass: "keyword", tokenValue: "TASK" }] }, "tokens.0"],
    ["a malformed predicate", { tokens: [TASK], predicate: { eq: ["task.categoryId"] } }, "predicate"],
    ["an unknown predicate operator", { tokens: [TASK], predicate: { like: ["task.title", "x"] } }, "predicate"],
    ["an empty eligibility window", { tokens: [TASK], eligibility: { activeFrom: "2030-01-02T00:00:00Z", activeUntil: "2030-01-01T00:00:00Z" } }, "eligibility.activeUntil"],
    ["an unknown field", { tokens: [TASK], priority: 1 }, "(root)"],
  ])("rejects %s with 400 naming the field", async (_name, body, field) => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const res = await api("POST", `/v1/agents/${agent.id}/subscriptions`, { key, body });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: any) => e.path).some((path: string) => path.startsWith(field))).toBe(true);
  });

  it("answers 404 for an unknown agent and for another tenant's agent, on every verb", async () => {
    const a = await createTenant("a");
    const b = await createTenant("b");
    const agent = await createAgent(a.key);
    const sub = await subscribe(a.key, agent.id, { tokens: [TASK] });
    for (const key of [b.key]) {
      expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key })).status).toBe(404);
      expect((await api("POST", `/v1/agents/${agent.id}/subscriptions`, { key, body: { tokens: [TASK] } })).status).toBe(404);
      expect((await api("DELETE", `/v1/agents/${agent.id}/subscriptions/${sub.id}`, { key })).status).toBe(404);
    }
    expect((await api("POST", `/v1/agents/ag_nobody/subscriptions`, { key: a.key, body: { tokens: [TASK] } })).status).toBe(404);
    // Another agent of the same tenant cannot delete it either.
    const other = await createAgent(a.key);
    expect((await api("DELETE", `/v1/agents/${other.id}/subscriptions/${sub.id}`, { key: a.key })).status).toBe(404);
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key: a.key })).body.data).toHaveLength(1);
  });

  it("needs agents:write to change subscriptions and agents:read to list them", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const readOnly = (await api("POST", "/v1/keys", { key, body: { scopes: ["agents:read"] } })).body.key;
    const journalOnly = (await api("POST", "/v1/keys", { key, body: { scopes: ["journal:write"] } })).body.key;
    expect((await api("POST", `/v1/agents/${agent.id}/subscriptions`, { key: readOnly, body: { tokens: [TASK] } })).status).toBe(403);
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key: readOnly })).status).toBe(200);
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key: journalOnly })).status).toBe(403);
  });

  it("destroying an agent tombstones its subscriptions and index rows; it cannot subscribe again", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK, { tokenClass: "entityId", tokenValue: "t_1" }] });
    expect(await indexRowCount(tenantId, sub.id)).toBe(2);
    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    expect(await indexRowCount(tenantId, sub.id)).toBe(0);
    expect((await api("GET", `/v1/agents/${agent.id}/subscriptions`, { key })).body.data).toEqual([]);
    const again = await api("POST", `/v1/agents/${agent.id}/subscriptions`, { key, body: { tokens: [TASK] } });
    expect(again.status).toBe(410);
    expect(again.body.code).toBe("agent_destroyed");
  });
});

describe("subscriptions: matching and wakes", () => {
  it("a TASK change in category gym wakes the gym coach, and nobody else, with an observation", async () => {
    const { tenantId, key } = await createTenant();
    const coach = await createAgent(key, { kind: "coach", displayName: "Gym coach", allowedCategoryIds: ["gym"] });
    const planner = await createAgent(key, { kind: "planner", displayName: "Planner", allowedCategoryIds: ["work"] });
    const lists = await createAgent(key, { kind: "lists", displayName: "Checklists" });
    const coachSub = await subscribe(key, coach.id, { tokens: [TASK], predicate: { eq: ["task.categoryId", "gym"] } });
    await subscribe(key, planner.id, { tokens: [TASK], predicate: { eq: ["task.categoryId", "work"] } });
    await subscribe(key, lists.id, { tokens: [{ tokenClass: "semanticKey", tokenValue: "CHECKLIST" }] });

    const logicalChangeKey = await writeTask(tenantId, { id: "t_squats", categoryId: "gym", title: "Squats 5x5" });
    const runKey = runKeys.subscription(coach.id, coachSub.id, logicalChangeKey);
    const run = await settled(tenantId, coach.id, runKey);
    expect(run).toMatchObject({ status: "completed", reason: "subscription", threadId: `${coach.id}:run:${runKey}` });
    expect(await batchRow(tenantId, logicalChangeKey)).toMatchObject({ matchedCount: 1, dispatchedAt: expect.any(String) });

    const messages = (await api("GET", `/v1/agents/${coach.id}/messages?threadId=${coach.id}:run:${runKey}`, { key })).body.data;
    const observation = messages.find((m: any) => m.kind === "observation");
    expect(observation.text).toBe("TASK changed: task t_squats (categoryId gym)");
    expect(observation.metadata).toMatchObject({ authority: "runtime_instruction", reason: "subscription", runKey });
    expect(observation.content.trigger).toMatchObject({ subscriptionId: coachSub.id, logicalChangeKey, source: "journal", origin: "local", matchedEntityIds: ["t_squats"] });
    expect(observation.content.tokens).toContainEqual({ tokenClass: "entityId", tokenValue: "t_squats" });
    expect(observation.content.entities).toEqual([expect.objectContaining({ id: "t_squats", type: "task", categoryId: "gym", fields: { title: "Squats 5x5" }, deleted: false })]);
    expect(messages.some((m: any) => m.kind === "assistant")).toBe(true);

    expect(await runsOf(tenantId, planner.id)).toEqual([]);
    expect(await runsOf(tenantId, lists.id)).toEqual([]);
  });

  it("a subscription with a sessionId wakes into that conversation: the visitor whose session it is sees the run and answers its decision", async () => {
    const { tenantId, key } = await createTenant();
    const session = widgetSessionId("visitor-1");
    const coach = await createAgent(key, {
      allowedCategoryIds: ["gym"],
      model: "builtin:playbook",
      playbook: { rules: [{ when: { reason: "subscription" }, tools: [{ name: "ask_user", args: { question: "Follow up on {{observation.entities.0.fields.title}}?", options: [{ id: "yes", label: "Yes" }] } }], reply: "asked" }] },
      subscriptions: [{ tokens: [TASK], predicate: { eq: ["task.categoryId", "gym"] }, sessionId: session }],
    });
    const [subscription] = (await api("GET", `/v1/agents/${coach.id}/subscriptions`, { key })).body.data;
    expect(subscription).toMatchObject({ sessionId: session });
    const mint = async (sub: string) => (await api("POST", "/v1/tokens", { key, body: { sub, agents: [coach.id], ttlSeconds: 600 } })).body.token as string;
    const [visitor, stranger] = [await mint("visitor-1"), await mint("visitor-2")];

    const logicalChangeKey = await writeTask(tenantId, { id: "t_rowing", categoryId: "gym", title: "Row 5k" });
    const runKey = runKeys.subscription(coach.id, subscription.id, logicalChangeKey);
    const thread = `${coach.id}:session:${session}`;
    expect(await settled(tenantId, coach.id, runKey)).toMatchObject({ status: "completed", reason: "subscription", threadId: thread });

    const seen = (await api("GET", `/v1/agents/${coach.id}/messages`, { key: visitor })).body.data as any[];
    expect(seen.find((m) => m.kind === "observation")).toMatchObject({ threadId: thread, text: "TASK changed: task t_rowing (categoryId gym)", metadata: { runKey } });
    const pending = (await api("GET", "/v1/decisions?status=pending", { key: visitor })).body.data as any[];
    expect(pending.map((d) => d.payload.question)).toEqual(["Follow up on Row 5k?"]);
    expect((await api("GET", "/v1/decisions?status=pending", { key: stranger })).body.data).toEqual([]);
    expect((await api("POST", `/v1/decisions/${pending[0].id}/resolve`, { key: stranger, body: { resolutionType: "choose_option", chosenOptionId: "yes" } })).status).toBe(404);
    expect((await api("POST", `/v1/decisions/${pending[0].id}/resolve`, { key: visitor, body: { resolutionType: "choose_option", chosenOptionId: "yes" } })).status).toBe(200);

    const invalid = await api("POST", `/v1/agents/${coach.id}/subscriptions`, { key, body: { tokens: [TASK], sessionId: "not/a session" } });
    expect(invalid.status).toBe(400);
  });

  it("projects changed entities by the agent's category scope (deny by default)", async () => {
    const { tenantId, key } = await createTenant();
    const watcher = await createAgent(key, { kind: "watcher", displayName: "Watcher", allowedCategoryIds: ["work"] });
    const sub = await subscribe(key, watcher.id, { tokens: [{ tokenClass: "entityId", tokenValue: "t_secret" }] });
    const logicalChangeKey = await writeTask(tenantId, { id: "t_secret", categoryId: "health", title: "private" });
    const runKey = runKeys.subscription(watcher.id, sub.id, logicalChangeKey);
    await settled(tenantId, watcher.id, runKey);
    const messages = (await api("GET", `/v1/agents/${watcher.id}/messages`, { key })).body.data;
    const observation = messages.find((m: any) => m.kind === "observation");
    expect(observation.text).toBe("TASK changed: task t_secret (out of scope)");
    expect(observation.content.entities).toEqual([{ id: "t_secret", type: "task", withheld: "out_of_scope" }]);
    expect(JSON.stringify(messages)).not.toContain("private");
  });

  it("re-dispatching the same batch is harmless: one run per (agent, subscription, change)", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK] });
    const logicalChangeKey = await writeTask(tenantId, { id: "t_1", categoryId: "gym", title: "x" });
    // Simulate a crash after sending but before markDispatched: the batch is pending again.
    await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      instance.parts.db.update(schema.notificationBatches).set({ dispatchedAt: null }).where(eq(schema.notificationBatches.logicalChangeKey, logicalChangeKey)).run();
      await instance.parts.dispatcher.dispatchPending();
    });
    const runKey = runKeys.subscription(agent.id, sub.id, logicalChangeKey);
    await settled(tenantId, agent.id, runKey);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await runsOf(tenantId, agent.id)).map((r) => r.runKey)).toEqual([runKey]);
  });

  it("a batch without change provenance fails closed: recorded, no wake", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK] });
    const forged = "f".repeat(64);
    await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      instance.parts.db
        .insert(schema.notificationBatches)
        .values({ logicalChangeKey: forged, changeUnitKeys: [], tokens: [TASK], origin: "local", source: "journal", authority: "runtime_instruction", createdAt: new Date().toISOString() })
        .run();
      await instance.parts.dispatcher.dispatchPending();
    });
    expect(await batchRow(tenantId, forged)).toMatchObject({ matchedCount: 0, dispatchedAt: expect.any(String) });
    const page = await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => instance.listAuditPage({ limit: 50 }));
    const audit = page.ok ? page.data : [];
    expect(audit.find((entry) => entry.action === "notification.failed_closed")).toMatchObject({ target: forged, detail: { code: "missing_change_provenance" } });

    // A proper change afterwards still wakes the agent, and it is the only run.
    const logicalChangeKey = await writeTask(tenantId, { id: "t_2", categoryId: "gym", title: "y" });
    const runKey = runKeys.subscription(agent.id, sub.id, logicalChangeKey);
    await settled(tenantId, agent.id, runKey);
    expect((await runsOf(tenantId, agent.id)).map((r) => r.runKey)).toEqual([runKey]);
    expect(runKeys.subscription(agent.id, sub.id, forged)).not.toBe(runKey);
  });

  it("a dormant agent's subscription wake is recorded as skipped_sleeping", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK] });
    expect((await api("POST", `/v1/agents/${agent.id}/pause`, { key })).status).toBe(200);
    const logicalChangeKey = await writeTask(tenantId, { id: "t_3", categoryId: "gym", title: "z" });
    const run = await settled(tenantId, agent.id, runKeys.subscription(agent.id, sub.id, logicalChangeKey));
    expect(run).toMatchObject({ status: "skipped_sleeping", reason: "subscription", errorCode: "agent_dormant" });
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data;
    expect(messages).toEqual([]);
  });

  it("a subscription wake in flight when its agent is destroyed settles as skipped_destroyed", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK] });
    const logicalChangeKey = await writeTask(tenantId, { id: "t_4", categoryId: "gym", title: "w" }, { dispatch: false });
    // Dispatch for real, but hold the sent wakes back, as a queue does between send and delivery.
    const held: WakeJob[] = [];
    await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      const queue = { sendBatch: async (messages: Iterable<{ body: WakeJob }>) => void held.push(...[...messages].map((m) => m.body)) } as unknown as Queue<WakeJob>;
      const dispatcher = new Dispatcher({ ...instance.parts.dispatcher["deps"], queue });
      await dispatcher.dispatchPending();
    });
    expect(held.map((job) => job.agentId)).toEqual([agent.id]);
    expect(held[0]).toMatchObject({ reason: "subscription", logicalChangeKey, authority: "runtime_instruction" });
    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    await env.WAKE_QUEUE.sendBatch(held.map((body) => ({ body })));
    const run = await settled(tenantId, agent.id, runKeys.subscription(agent.id, sub.id, logicalChangeKey));
    expect(run).toMatchObject({ status: "skipped_destroyed", errorCode: "agent_destroyed" });
  });

  it("one change matching many subscribers wakes each of them once", async () => {
    const { tenantId, key } = await createTenant();
    const agents = await Promise.all(Array.from({ length: 12 }, (_, i) => createAgent(key, { displayName: `Coach ${i}` })));
    const subs = await Promise.all(agents.map((agent) => subscribe(key, agent.id, { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "task.categoryId", tokenValue: "gym" }] })));
    const logicalChangeKey = await writeTask(tenantId, { id: "t_many", categoryId: "gym", title: "group class" });
    const runs = await Promise.all(agents.map((agent, i) => settled(tenantId, agent.id, runKeys.subscription(agent.id, subs[i].id, logicalChangeKey))));
    expect(runs.every((run) => run.status === "completed")).toBe(true);
    expect(await batchRow(tenantId, logicalChangeKey)).toMatchObject({ matchedCount: 12 });
    await eventually(async () => (await runsOf(tenantId, agents[0].id)).length === 1);
  });
});

describe("subscriptions: dispatch failures", () => {
  it("a batch whose send fails stays pending without blocking the others, and is retried with backoff", async () => {
    const { tenantId } = await createTenant();
    const outcome = await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      const now = new Date().toISOString();
      const record = { id: "ag_x", kind: "coach", displayName: "x", lifecycle: "active", allowedCategoryIds: [] };
      instance.parts.db.insert(schema.agentDirectory).values({ id: "ag_x", kind: "coach", displayName: "x", lifecycle: "active", record, createdAt: now, updatedAt: now }).run();
      instance.parts.subscriptions.create("ag_x", { tokens: [tokens.semanticKey("POISON"), tokens.semanticKey("FINE")] });
      const recordBatch = (value: string) =>
        instance.parts.db.transaction((tx) => instance.parts.notifications.recordLocal(tx as never, [{ payloadType: "probe", payloadId: value }], [tokens.semanticKey(value)], { source: "journal", authority: "runtime_instruction" })).batch.logicalChangeKey;
      const poison = recordBatch("POISON");
      const fine = recordBatch("FINE");
      const delays: number[] = [];
      const sent: string[] = [];
      let healthy = false;
      const queue = {
        sendBatch: async (messages: Iterable<{ body: WakeJob }>) => {
          const bodies = [...messages].map((m) => m.body);
          if (!healthy && bodies.some((body) => body.logicalChangeKey === poison)) throw new Error("queue unavailable");
          sent.push(...bodies.map((body) => body.logicalChangeKey!));
        },
      } as unknown as Queue<WakeJob>;
      const dispatcher = new Dispatcher({ ...instance.parts.dispatcher["deps"], queue, retryLater: (delayMs: number) => void delays.push(delayMs) });
      await dispatcher.dispatchPending();
      const pendingAfterFirst = instance.parts.notifications.pending().map((p) => p.batch.logicalChangeKey);
      await dispatcher.dispatchPending();
      healthy = true;
      await dispatcher.dispatchPending();
      return { poison, fine, delays, sent, pendingAfterFirst, pendingAtEnd: instance.parts.notifications.pending().length };
    });
    expect(outcome.pendingAfterFirst).toEqual([outcome.poison]);
    expect(outcome.sent).toEqual([outcome.fine, outcome.poison]);
    expect(outcome.delays).toEqual([5_000, 10_000]);
    expect(outcome.pendingAtEnd).toBe(0);
  });

  it("the tenant alarm re-runs dispatch for batches left pending", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sub = await subscribe(key, agent.id, { tokens: [TASK] });
    const logicalChangeKey = await writeTask(tenantId, { id: "t_alarm", categoryId: "gym", title: "later" }, { dispatch: false });
    await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      await instance["ctx"].storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(tenantDo(tenantId))).toBe(true);
    expect(await batchRow(tenantId, logicalChangeKey)).toMatchObject({ matchedCount: 1, dispatchedAt: expect.any(String) });
    expect((await settled(tenantId, agent.id, runKeys.subscription(agent.id, sub.id, logicalChangeKey))).status).toBe("completed");
  });
});

describe("subscriptions: matching cost", () => {
  it("prefilters through the token index: cost follows the matches, and 1 000 matches go out in chunks of at most 100", async () => {
    const { tenantId } = await createTenant();
    const outcome = await runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => {
      const now = new Date().toISOString();
      const store = instance.parts.subscriptions;
      for (let i = 0; i < 1000; i++) {
        const id = `ag_fake${i}`;
        const record = { id, kind: "coach", displayName: id, lifecycle: "active", allowedCategoryIds: [] };
        instance.parts.db.insert(schema.agentDirectory).values({ id, kind: "coach", displayName: id, lifecycle: "active", record, createdAt: now, updatedAt: now }).run();
        store.create(id, { tokens: [tokens.semanticKey("CROWD")] });
      }
      store.create("ag_fake0", { tokens: [tokens.semanticKey("RARE")] });
      const chunks: number[] = [];
      const queue = { sendBatch: async (messages: Iterable<unknown>) => void chunks.push([...messages].length) } as unknown as Queue<WakeJob>;
      const dispatcher = new Dispatcher({ ...instance.parts.dispatcher["deps"], queue });
      const record = (value: string) =>
        instance.parts.db.transaction((tx) => instance.parts.notifications.recordLocal(tx as never, [{ payloadType: "probe", payloadId: value }], [tokens.semanticKey(value)], { source: "journal", authority: "runtime_instruction" }));
      record("RARE");
      const [rare] = instance.parts.notifications.pending();
      const rareResult = await dispatcher.dispatchBatch(rare!);
      const rareChunks = [...chunks];
      record("CROWD");
      const [crowd] = instance.parts.notifications.pending();
      const crowdResult = await dispatcher.dispatchBatch(crowd!);
      return { rareResult, rareChunks, crowdResult, chunks: chunks.slice(rareChunks.length) };
    });
    expect(outcome.rareResult).toMatchObject({ status: "dispatched", candidates: 1, wakes: 1 });
    expect(outcome.rareChunks).toEqual([1]);
    expect(outcome.crowdResult).toMatchObject({ status: "dispatched", candidates: 1000, wakes: 1000 });
    expect(outcome.chunks.reduce((sum, n) => sum + n, 0)).toBe(1000);
    expect(Math.max(...outcome.chunks)).toBeLessThanOrEqual(100);
  });
});

describe("subscriptions: queue limits", () => {
  const job = (i: number, blob = ""): WakeJob => ({
    tenantId: "t",
    agentId: `ag_${i}`,
    reason: "subscription",
    runKey: i.toString(16).padStart(64, "0"),
    threadId: `ag_${i}:run:x`,
    authority: "external_evidence",
    logicalChangeKey: "a".repeat(64),
    input: { observation: { summary: "s", data: { tokens: [], entities: [{ id: "t_1", type: "task", fields: { blob } }], payload: { blob } } } },
  });
  const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

  it("sends at most 100 wakes and 250 KB per sendBatch, losing none", () => {
    const small = Array.from({ length: 1000 }, (_, i) => job(i));
    const chunks = chunkJobs(small);
    expect(chunks).toHaveLength(10);
    expect(chunks.flat()).toEqual(small);
    const large = Array.from({ length: 10 }, (_, i) => job(i, "x".repeat(60_000)));
    for (const chunk of chunkJobs(large)) expect(chunk.reduce((sum, item) => sum + size(item), 0)).toBeLessThanOrEqual(QUEUE_LIMITS.batchBytes);
  });

  it("slims an oversized wake under the message limit, entity fields first, then the payload", () => {
    const fits = fitJob(job(1, "x".repeat(65_000)));
    expect((fits.input.observation as any).data.truncated).toBe("entity_fields");
    expect((fits.input.observation as any).data.payload.blob).toHaveLength(65_000);
    const slim = fitJob(job(2, "x".repeat(130_000)));
    expect((slim.input.observation as any).data.truncated).toBe("entity_fields_and_payload");
    expect(size(slim)).toBeLessThanOrEqual(QUEUE_LIMITS.messageBytes);
    expect(fitJob(job(3))).toEqual(job(3));
  });
});
