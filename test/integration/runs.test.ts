import { createMessageBatch, env, getQueueResult, createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import worker from "../../src/worker";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

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

  it("a run that crashes mid-flight resumes and ends terminal, appending nothing twice", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    expect(await agentDo(tenantId, agent.id).armFault("run.afterReply")).toBe(true);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "survive" } });
    // The crash point follows the reply's append: once the reply is visible the first attempt has crashed
    // (a watchdog call while that attempt is still draining would join it rather than resume it).
    const crashed = await eventually(async () => {
      const run = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
      const replied = ((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data ?? []).some((m: any) => m.kind === "assistant");
      return run.status === "running" && replied ? run : undefined;
    });
    expect(crashed.attempt).toBe(1);
    await agentDo(tenantId, agent.id).watchdog();
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run).toMatchObject({ status: "completed", attempt: 2 });
    expect(run.trace.resumed).toBe(true);
    const history = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(history.body.data.map((m: any) => m.kind)).toEqual(["assistant", "user"]);
  });

  it("a run interrupted more than maxAttempts times ends failed_terminal, never stuck", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id);
    await stub.armFault("run.beforeModel", 3);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "doomed" } });
    // The watchdog resumes a crashed attempt, but one called while an attempt is still draining joins it: so it is
    // called until the run ends (not a fixed number of times after fixed pauses, which a loaded machine outruns).
    const run = await eventually(async () => {
      await stub.watchdog();
      const current = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
      return ["queued", "running"].includes(current.status) ? undefined : current;
    });
    expect(run).toMatchObject({ status: "failed_terminal", errorCode: "interrupted_too_often", attempt: 4 });
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
