import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import worker from "../../src/worker";
import { api, createAgent, createTenant } from "./helpers";

async function deliverDead(job: Record<string, unknown>, id: string) {
  const batch = createMessageBatch("vigil-wake-dlq", [{ id, timestamp: new Date(), attempts: 1, body: job }]);
  const ctx = createExecutionContext();
  await worker.queue!(batch as never, env as never, ctx);
  return getQueueResult(batch, ctx);
}

describe("the wake dead-letter queue", () => {
  it("settles a dead wake visibly: its run is failed_terminal (wake_dead_lettered) with an audit entry, once", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const runKey = runKeys.manual(agent.id, "never-delivered");
    const job = { tenantId, agentId: agent.id, reason: "manual", runKey, threadId: threadIds.autonomous(agent.id, runKey), authority: "runtime_instruction", input: {} };
    expect((await deliverDead(job, "d1")).explicitAcks).toEqual(["d1"]);
    const run = await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ runKey, status: "failed_terminal", errorCode: "wake_dead_lettered", reason: "manual" });
    // A redelivered dead letter changes nothing and audits nothing more.
    expect((await deliverDead(job, "d2")).explicitAcks).toEqual(["d2"]);
    const audit = (await api("GET", "/v1/audit", { key })).body.data.filter((entry: any) => entry.action === "wake.dead_lettered");
    expect(audit).toEqual([expect.objectContaining({ actor: "system:wake-dlq", target: `agent:${agent.id}`, detail: expect.objectContaining({ runKey, settled: true, runStatus: "failed_terminal" }) })]);
    // The run is terminal: the same runKey arriving late on the live queue is a duplicate, never executed.
    const late = createMessageBatch("vigil-wake", [{ id: "late", timestamp: new Date(), attempts: 1, body: job }]);
    const ctx = createExecutionContext();
    await worker.queue!(late as never, env as never, ctx);
    await getQueueResult(late, ctx);
    expect((await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body.status).toBe("failed_terminal");
  });

  it("leaves a wake that did arrive alone (the failure came after the inbox write)", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hello" } });
    const runKey = sent.body.runKey as string;
    const job = { tenantId, agentId: agent.id, reason: "userInitiated", runKey, threadId: `${agent.id}:session:default`, authority: "operator_instruction", input: {} };
    expect((await deliverDead(job, "d3")).explicitAcks).toEqual(["d3"]);
    const audit = (await api("GET", "/v1/audit", { key })).body.data.filter((entry: any) => entry.action === "wake.dead_lettered");
    expect(audit).toEqual([]);
  });

  it("audits a dead wake for an agent that does not exist", async () => {
    const { tenantId, key } = await createTenant();
    const runKey = runKeys.manual("a_missing", "x");
    const job = { tenantId, agentId: "a_missing", reason: "manual", runKey, threadId: threadIds.autonomous("a_missing", runKey), authority: "runtime_instruction", input: {} };
    expect((await deliverDead(job, "d4")).explicitAcks).toEqual(["d4"]);
    const audit = (await api("GET", "/v1/audit", { key })).body.data.filter((entry: any) => entry.action === "wake.dead_lettered");
    expect(audit).toEqual([expect.objectContaining({ target: "agent:a_missing", detail: expect.objectContaining({ settled: false, code: "not_found" }) })]);
  });
});
