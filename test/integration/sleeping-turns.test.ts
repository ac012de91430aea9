import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

// Nothing a person wrote is lost: a turn that arrives while the agent sleeps stays in its history.
const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const history = async (key: string, agentId: string) => ((await api("GET", `/v1/agents/${agentId}/messages?limit=200`, { key })).body.data as any[]).reverse();

describe("messages to a sleeping agent", () => {
  it("are stored and answered: a person's message wakes the agent, while autonomous wakes stay skipped until sleepUntil", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "awake" }] } });
    const slept = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool sleep {"durationSeconds":3600}' } });
    expect((await waitForRun(key, agent.id, slept.body.runKey)).status).toBe("completed");
    const state = (await api("GET", `/v1/agents/${agent.id}/state`, { key })).body;
    expect(Date.parse(state.sleepUntil)).toBeGreaterThan(Date.now());

    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "are you there?" } });
    expect(sent.status).toBe(202);
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    const turn = (await history(key, agent.id)).slice(-2);
    expect(turn.map((m) => [m.kind, m.text])).toEqual([
      ["user", "are you there?"],
      ["assistant", "awake"],
    ]);
    // The person's message did not end the sleep: an autonomous wake before sleepUntil is still skipped.
    expect((await api("GET", `/v1/agents/${agent.id}/state`, { key })).body.sleepUntil).toBe(state.sleepUntil);
    const webhookKey = runKeys.manual(agent.id, "autonomous-probe").split("").reverse().join("");
    await agentDo(tenantId, agent.id).enqueueWake({ tenantId, agentId: agent.id, reason: "webhook", runKey: webhookKey, threadId: threadIds.autonomous(agent.id, webhookKey), authority: "external_evidence", input: { text: "ping" } });
    expect(await waitForRun(key, agent.id, webhookKey)).toMatchObject({ status: "skipped_sleeping", errorCode: "sleeping" });
  });
});

describe("turns answered other than 202", () => {
  it("leave no half-written turn, and a retry with the same Idempotency-Key completes it exactly once", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const brake = await api("POST", "/v1/brakes", { key, body: { scope: "agent", target: agent.id, behaviour: "pause", reason: "load" } });
    expect(brake.status).toBe(201);
    const headers = { "idempotency-key": "turn-under-load" };
    const body = { text: "hello under load" };

    const refused = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body });
    expect(refused.status).toBe(423);
    expect(refused.body.code).toBe("brake_engaged");
    expect((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data).toEqual([]);
    expect(await history(key, agent.id)).toEqual([]);

    expect((await api("POST", `/v1/brakes/${brake.body.id}/release`, { key })).status).toBe(200);
    const retried = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body });
    expect(retried.status).toBe(202);
    expect((await waitForRun(key, agent.id, retried.body.runKey)).status).toBe("completed");
    const again = await api("POST", `/v1/agents/${agent.id}/messages`, { key, headers, body });
    expect(again.status).toBe(202);
    expect(again.body.runKey).toBe(retried.body.runKey);

    expect((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data).toHaveLength(1);
    expect((await history(key, agent.id)).map((m) => m.kind)).toEqual(["user", "assistant"]);
  });
});
