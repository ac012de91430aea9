import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

async function setup() {
  const { tenantId, key } = await createTenant();
  const playbook = { rules: [{ when: { reason: "userInitiated" }, reply: "ok" }] };
  const agent = await createAgent(key, { kind: "coach", model: "builtin:playbook", playbook });
  return { tenantId, key, agent };
}

/** Appends messages straight into the agent's history (through History, so the FTS triggers fire). */
async function seed(tenantId: string, agentId: string, texts: string[], threadId = "seeded") {
  await runInDurableObject(agentDo(tenantId, agentId), async (instance: AgentDO) => {
    const history = instance.parts.history;
    texts.forEach((text, i) => history.append({ id: `${threadId}-${i}`, threadId, kind: i % 2 ? "assistant" : "user", text }));
  });
}

const search = (key: string, agentId: string, q: string, limit?: number) =>
  api("GET", `/v1/agents/${agentId}/memory/search?q=${encodeURIComponent(q)}${limit ? `&limit=${limit}` : ""}`, { key });

describe("memory slots API", () => {
  it("GET shows empty slots with versions and counts; PUT writes, bumps the version, no-ops on the same value", async () => {
    const { key, agent } = await setup();
    const empty = await api("GET", `/v1/agents/${agent.id}/memory`, { key });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ slots: { primaryGoal: null, primaryGoalVersion: 0, openLoopIds: [], openLoopIdsVersion: 0 }, counts: { messages: 0, summaries: 0 } });

    const put = await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key, body: { value: "Run a marathon", expectedVersion: 0 } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ slot: "primaryGoal", version: 1, changed: true });
    const again = await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key, body: { value: "Run a marathon" } });
    expect(again.body).toEqual({ slot: "primaryGoal", version: 1, changed: false });
    const loops = await api("PUT", `/v1/agents/${agent.id}/memory/slots/openLoopIds`, { key, body: { value: ["t1", "t2"] } });
    expect(loops.body).toEqual({ slot: "openLoopIds", version: 1, changed: true });

    const got = await api("GET", `/v1/agents/${agent.id}/memory`, { key });
    expect(got.body.slots).toMatchObject({ primaryGoal: "Run a marathon", primaryGoalVersion: 1, openLoopIds: ["t1", "t2"], openLoopIdsVersion: 1, activeTaskIdVersion: 0 });
    const state = await api("GET", `/v1/agents/${agent.id}/state`, { key });
    expect(state.body.slots.primaryGoal).toBe("Run a marathon");
  });

  it("a stale expectedVersion is 409 version_conflict and changes nothing", async () => {
    const { key, agent } = await setup();
    await api("PUT", `/v1/agents/${agent.id}/memory/slots/activeTaskId`, { key, body: { value: "task-1" } });
    const stale = await api("PUT", `/v1/agents/${agent.id}/memory/slots/activeTaskId`, { key, body: { value: "task-2", expectedVersion: 0 } });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("version_conflict");
    const got = await api("GET", `/v1/agents/${agent.id}/memory`, { key });
    expect(got.body.slots).toMatchObject({ activeTaskId: "task-1", activeTaskIdVersion: 1 });
  });

  it("invalid values and unknown keys are 400 invalid_slot naming the issue; widget tokens may only read", async () => {
    const { key, agent } = await setup();
    const dup = await api("PUT", `/v1/agents/${agent.id}/memory/slots/openLoopIds`, { key, body: { value: ["a", "a"] } });
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe("invalid_slot");
    expect(dup.body.detail).toContain("openLoopIds must be unique");
    const ext = await api("PUT", `/v1/agents/${agent.id}/memory/slots/extension`, { key, body: { value: { flat: 1 } } });
    expect(ext.status).toBe(400);
    expect(ext.body.errors).toEqual([{ path: "value.flat", message: expect.any(String) }]);
    const unregistered = await api("PUT", `/v1/agents/${agent.id}/memory/slots/extension`, { key, body: { value: { "gym.target": 3 } } });
    expect(unregistered.status).toBe(400);
    expect(unregistered.body.detail).toContain("extension key is not registered: gym.target");
    const unknown = await api("PUT", `/v1/agents/${agent.id}/memory/slots/mood`, { key, body: { value: "x" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain("unknown slot key: mood");
    const missing = await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key, body: {} });
    expect(missing.status).toBe(400);

    const token = (await api("POST", "/v1/tokens", { key, body: { sub: "u1", agents: [agent.id], ttlSeconds: 600 } })).body.token;
    expect((await api("GET", `/v1/agents/${agent.id}/memory`, { key: token })).status).toBe(200);
    expect((await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key: token, body: { value: "x" } })).status).toBe(403);
    expect((await api("GET", `/v1/agents/${agent.id}/export`, { key: token })).status).toBe(403);
  });
});

describe("recall", () => {
  it("ranks the message matching the most terms first, with snippet and metadata", async () => {
    const { tenantId, key, agent } = await setup();
    await seed(tenantId, agent.id, [
      "we talked about the weather today",
      "my knee hurts after the long run",
      "plan: long run on sunday, knee physio on monday",
      "grocery list: apples, bread",
    ]);
    const res = await search(key, agent.id, "knee long run physio");
    expect(res.status).toBe(200);
    expect(res.body.data.map((h: any) => h.messageId)).toEqual(["seeded-2", "seeded-1"]);
    const top = res.body.data[0];
    expect(top).toMatchObject({ kind: "user", threadId: "seeded" });
    expect(top.snippet).toContain("[physio]");
    expect(top.rank).toBeLessThan(res.body.data[1].rank);
    expect(Date.parse(top.createdAt)).not.toBeNaN();
    expect((await search(key, agent.id, "knee", 1)).body.data).toHaveLength(1);

    const counts = (await api("GET", `/v1/agents/${agent.id}/memory`, { key })).body.counts;
    expect(counts).toEqual({ messages: 4, summaries: 0 });
  });

  it("hostile queries never 500; empty q is 400", async () => {
    const { tenantId, key, agent } = await setup();
    await seed(tenantId, agent.id, ["foo bar baz", "NEAR the end, AND more"]);
    for (const q of ['"foo OR', "foo*", "NEAR(", "AND", "bar:baz", "-foo ^bar", "'; DROP TABLE messages; --", "(((x)))", "🙂 foo"]) {
      const res = await search(key, agent.id, q);
      expect(res.status, q).toBe(200);
      expect(Array.isArray(res.body.data)).toBe(true);
    }
    expect((await search(key, agent.id, '"foo OR')).body.data.map((h: any) => h.messageId)).toContain("seeded-0");
    expect((await search(key, agent.id, "")).status).toBe(400);
    expect((await search(key, agent.id, "   ")).status).toBe(400);
    expect((await search(key, agent.id, "!!! ***")).status).toBe(400);
    expect((await search(key, agent.id, "(((")).body.code).toBe("validation_failed");
  });

  it("is scoped to the agent: another agent's messages never appear", async () => {
    const { tenantId, key, agent } = await setup();
    const other = await createAgent(key, { kind: "coach", model: "builtin:playbook", playbook: { rules: [] } });
    await seed(tenantId, agent.id, ["mine: zebra crossing"]);
    await seed(tenantId, other.id, ["theirs: zebra stripes", "theirs: secret okapi"]);
    expect((await search(key, agent.id, "zebra")).body.data.map((h: any) => h.messageId)).toEqual(["seeded-0"]);
    expect((await search(key, agent.id, "okapi")).body.data).toEqual([]);
    expect((await search(key, other.id, "zebra okapi")).body.data).toHaveLength(2);
  });

  it("memory_search runs as a tool in a playbook turn and matches the registry output", async () => {
    const { tenantId, key, agent } = await setup();
    await seed(tenantId, agent.id, ["the dentist appointment is on friday", "nothing relevant here"]);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool memory_search ${JSON.stringify({ query: "dentist friday", limit: 3 })}` } });
    expect(sent.status).toBe(202);
    expect((await waitForRun(key, agent.id, sent.body.runKey)).status).toBe("completed");
    const results = (await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key })).body.data.filter(
      (m: any) => m.kind === "toolResult" && m.metadata.runKey === sent.body.runKey,
    );
    expect(results).toHaveLength(1);
    const result = results[0].content;
    expect(result).toMatchObject({ ok: true, toolName: "memory_search" });
    const { memorySearch } = await import("../../src/tools/registry/memory");
    expect(memorySearch.outputSchema.safeParse(result.output).success).toBe(true);
    expect(result.output.hits[0]).toMatchObject({ messageId: "seeded-0", threadId: "seeded", kind: "user" });
    expect(result.output.hits[0].score).toBeGreaterThan(0);
  });
});

describe("export", () => {
  it("streams every section as JSON, including all 300 messages, and audits it", async () => {
    const { tenantId, key, agent } = await setup();
    await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key, body: { value: "export me" } });
    await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { name: "daily", spec: { kind: "interval", everySeconds: 3600 } } });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool publish_report {"scope":"current","content":{"text":"fine"}}' } });
    await waitForRun(key, agent.id, sent.body.runKey);
    await seed(tenantId, agent.id, Array.from({ length: 300 }, (_, i) => `history line ${i}`));

    const res = await api("GET", `/v1/agents/${agent.id}/export`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(typeof res.body).toBe("object");
    for (const section of ["agent", "state", "messages", "runs", "events", "actions", "timers", "schedulerDecisions", "reports"]) expect(res.body, section).toHaveProperty(section);
    expect(res.body.agent.id).toBe(agent.id);
    expect(res.body.state.slots.primaryGoal).toBe("export me");
    const seeded = res.body.messages.filter((m: any) => m.threadId === "seeded");
    expect(seeded).toHaveLength(300);
    expect(new Set(seeded.map((m: any) => m.text)).size).toBe(300);
    expect(res.body.messages.length).toBe((await api("GET", `/v1/agents/${agent.id}/memory`, { key })).body.counts.messages);
    expect(res.body.runs.length).toBeGreaterThan(0);
    expect(res.body.actions.some((a: any) => a.toolName === "publish_report")).toBe(true);
    expect(res.body.reports).toHaveLength(1);
    expect(res.body.events.length).toBeGreaterThan(300);

    const tenant = env.TENANT.get(env.TENANT.idFromName(tenantId)) as any;
    const audit = (await tenant.listAuditPage({ limit: 20 })).data;
    expect(audit.some((e: any) => e.action === "agent.exported" && e.target === agent.id)).toBe(true);
    expect((await api("GET", `/v1/agents/nope/export`, { key })).status).toBe(404);
  });
});
