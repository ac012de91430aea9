import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import { api, createAgent, createTenant, eventually, inDo, waitForRun } from "./helpers";

const agentBatches = (tenantId: string) =>
  inDo(tenantStub(env, tenantId), (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM notification_batches WHERE source LIKE 'agent:%'").one().n);

const runsOf = async (key: string, agentId: string) => (await api("GET", `/v1/agents/${agentId}/runs`, { key })).body.data as any[];

describe("agent notifications", () => {
  it("an agent's reply wakes another agent subscribed to it, and never wakes itself", async () => {
    const { key } = await createTenant();
    const speaker = await createAgent(key, { displayName: "Speaker" });
    const listener = await createAgent(key, { displayName: "Listener" });
    const follow = { tokens: [{ tokenClass: "semanticKey", tokenValue: "agentMessageAppendedNotification" }, { tokenClass: "entityId", tokenValue: speaker.id }] };
    const sub = await api("POST", `/v1/agents/${listener.id}/subscriptions`, { key, body: { tokens: [follow.tokens[1]] } });
    expect(sub.status).toBe(201);
    const self = await api("POST", `/v1/agents/${speaker.id}/subscriptions`, { key, body: { tokens: [follow.tokens[1]] } });
    expect(self.status).toBe(201);

    const sent = await api("POST", `/v1/agents/${speaker.id}/messages`, { key, body: { text: "news" } });
    await waitForRun(key, speaker.id, sent.body.runKey);
    const woken = await eventually(async () => {
      const runs = await runsOf(key, listener.id);
      return runs.find((run) => run.reason === "subscription" && run.status === "completed");
    });
    expect(woken.reason).toBe("subscription");
    const observation = (await api("GET", `/v1/agents/${listener.id}/messages`, { key })).body.data.find((m: any) => m.kind === "observation");
    expect(JSON.stringify(observation.content.tokens)).toContain("agentMessageAppendedNotification");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await runsOf(key, speaker.id)).map((run) => run.reason)).toEqual(["userInitiated"]);
  });

  it("a run no other agent follows records no notification batch (bytes per turn); one that is followed does", async () => {
    const { key, tenantId } = await createTenant();
    const loner = await createAgent(key, { displayName: "Loner" });
    const self = await api("POST", `/v1/agents/${loner.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: loner.id }] } });
    expect(self.status).toBe(201); // its own subscription never wakes it, so it does not count
    const before = await agentBatches(tenantId);
    const first = await api("POST", `/v1/agents/${loner.id}/messages`, { key, body: { text: "anyone?" } });
    await waitForRun(key, loner.id, first.body.runKey);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await agentBatches(tenantId)).toBe(before);

    const follower = await createAgent(key, { displayName: "Follower" });
    await api("POST", `/v1/agents/${follower.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: loner.id }] } });
    const second = await api("POST", `/v1/agents/${loner.id}/messages`, { key, body: { text: "now?" } });
    await waitForRun(key, loner.id, second.body.runKey);
    await eventually(async () => (await agentBatches(tenantId)) > before);
  });

  it("two agents following each other stop after config.run.maxCascadeDepth hops, and the stop is audited", async () => {
    const { key } = await createTenant();
    const ping = await createAgent(key, { displayName: "Ping" });
    const pong = await createAgent(key, { displayName: "Pong" });
    for (const [follower, followed] of [[ping, pong], [pong, ping]] as const) {
      const sub = await api("POST", `/v1/agents/${follower.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: followed.id }] } });
      expect(sub.status).toBe(201);
    }
    await api("POST", `/v1/agents/${ping.id}/messages`, { key, body: { text: "serve" } });
    // Nine queued hops take a while on a loaded machine: a generous bound (and test timeout), polled gently enough
    // (≤ 0.7 s apart) to stay under the per-key rate limit (100/min) the whole time.
    const limited = await eventually(async () => {
      const audit = await api("GET", "/v1/audit?limit=200", { key });
      return (audit.body.data as any[] | undefined)?.find((entry) => entry.action === "notification.cascade_limited");
    }, 50_000, 700);
    expect(limited.detail).toMatchObject({ cascadeDepth: 9, limit: 8 });
    // The user's turn, then one subscription run per hop 1…8; nothing after the limit.
    const settled = async () => [...(await runsOf(key, ping.id)), ...(await runsOf(key, pong.id))];
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const runs = await settled();
    expect(runs.filter((run) => run.reason === "userInitiated")).toHaveLength(1);
    expect(runs.filter((run) => run.reason === "subscription")).toHaveLength(8);
  }, 90_000);

  it("changing an agent emits agentChangedNotification with kind and lifecycle subtypes", async () => {
    const { key } = await createTenant();
    const watched = await createAgent(key, { kind: "planner", displayName: "Planner" });
    const watcher = await createAgent(key, { displayName: "Watcher" });
    const sub = await api("POST", `/v1/agents/${watcher.id}/subscriptions`, {
      key,
      body: { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "agent.lifecycle", tokenValue: "dormant" }] },
    });
    expect(sub.status).toBe(201);
    await api("POST", `/v1/agents/${watched.id}/pause`, { key });
    const run = await eventually(async () => (await runsOf(key, watcher.id)).find((r) => r.status === "completed"));
    expect(run.reason).toBe("subscription");
  });
});
