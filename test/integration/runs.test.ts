import { createMessageBatch, env, getQueueResult, createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import worker from "../../src/worker";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

describe("runs", () => {
  it("runs two concurrent messages one after the other, losing neither", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { modelOptions: { chunkDelayMs: 20 } });
    const [a, b] = await Promise.all([
      api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "first message here" } }),
      api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "second message here" } }),
    ]);
    const [runA, runB] = [await waitForRun(key, agent.id, a.body.runKey), await waitForRun(key, agent.id, b.body.runKey)];
    expect([runA.status, runB.status]).toEqual(["completed", "completed"]);
    const [earlier, later] = [runA, runB].sort((x, y) => x.startedAt.localeCompare(y.startedAt));
    expect(later.startedAt >= earlier.endedAt).toBe(true);
    const history = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(history.body.data.map((m: any) => m.text).sort()).toEqual(["echo: first message here", "echo: second message here", "first message here", "second message here"]);
  });

  it("a redelivered queue message runs once (runKey dedupe)", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const runKey = runKeys.manual(agent.id, "redelivered");
    const job = { tenantId, agentId: agent.id, reason: "manual", runKey, threadId: threadIds.autonomous(agent.id, runKey), authority: "runtime_instruction", input: {} };
    for (let delivery = 0; delivery < 3; delivery++) {
      const batch = createMessageBatch("vigil-wake", [{ id: `m${delivery}`, timestamp: new Date(), attempts: delivery + 1, body: job }]);
      const ctx = createExecutionContext();
      await worker.queue!(batch as never, env as never, ctx);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks).toEqual([`m${delivery}`]);
    }
    await waitForRun(key, agent.id, runKey);
    const runs = await api("GET", `/v1/agents/${agent.id}/runs`, { key });
    expect(runs.body.data.map((r: any) => r.runKey)).toEqual([runKey]);
    const events = (await agentDo(tenantId, agent.id).listEvents(0, 1000)) as Array<{ type: string }>;
    expect(events.filter((e: any) => e.type === "run.started")).toHaveLength(1);
  });

  it("a wake queued for a paused agent settles as skipped, not run", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    await api("POST", `/v1/agents/${agent.id}/pause`, { key });
    const runKey = runKeys.manual(agent.id, "while-paused");
    const outcome = await agentDo(tenantId, agent.id).enqueueWake({ tenantId, agentId: agent.id, reason: "manual", runKey, threadId: threadIds.autonomous(agent.id, runKey), authority: "runtime_instruction", input: {} });
    expect(outcome).toMatchObject({ ok: true, status: "accepted" });
    const run = await waitForRun(key, agent.id, runKey);
    expect(run.status).toBe("skipped_sleeping");
  });

  it("pages runs and rejects a malformed runKey", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    for (const text of ["1", "2", "3"]) await waitForRun(key, agent.id, (await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } })).body.runKey);
    const page1 = await api("GET", `/v1/agents/${agent.id}/runs?limit=2`, { key });
    const page2 = await api("GET", `/v1/agents/${agent.id}/runs?limit=2&cursor=${page1.body.nextCursor}`, { key });
    expect(page1.body.data).toHaveLength(2);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.nextCursor).toBeNull();
    expect((await api("GET", `/v1/agents/${agent.id}/runs/not-a-key`, { key })).status).toBe(400);
    expect((await api("GET", `/v1/agents/${agent.id}/runs/${"0".repeat(64)}`, { key })).status).toBe(404);
  });
});
