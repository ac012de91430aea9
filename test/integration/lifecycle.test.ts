import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

describe("agent lifecycle", () => {
  it("pause refuses ingress with resume guidance; resume admits it again", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    expect((await api("POST", `/v1/agents/${agent.id}/pause`, { key })).body.lifecycle).toBe("dormant");
    const refused = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("agent_dormant");
    expect(refused.body.detail).toContain("/resume");
    const wake = await api("POST", `/v1/agents/${agent.id}/wake`, { key });
    expect(wake.body.code).toBe("agent_dormant");
    expect((await api("POST", `/v1/agents/${agent.id}/resume`, { key })).body.lifecycle).toBe("active");
    expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } })).status).toBe(202);
  });

  it("an agent created with start=false waits for resume", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { start: false });
    expect(agent.lifecycle).toBe("created");
    expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } })).body.code).toBe("agent_not_started");
  });

  it("destroy is terminal and blocks new work at once", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const destroyed = await api("DELETE", `/v1/agents/${agent.id}`, { key });
    expect(destroyed.body.lifecycle).toBe("destroyed");
    const msg = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } });
    expect(msg.status).toBe(410);
    expect(msg.body.code).toBe("agent_destroyed");
    expect((await api("POST", `/v1/agents/${agent.id}/resume`, { key })).body.code).toBe("agent_destroyed");
    expect((await api("PATCH", `/v1/agents/${agent.id}`, { key, body: { displayName: "again" } })).body.code).toBe("agent_destroyed");
    const listed = await api("GET", "/v1/agents", { key });
    expect(listed.body.data[0].lifecycle).toBe("destroyed");
  });

  it("patch honours optimistic concurrency", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const ok = await api("PATCH", `/v1/agents/${agent.id}`, { key, body: { displayName: "Renamed", version: 1 } });
    expect(ok.body).toMatchObject({ displayName: "Renamed", version: 2 });
    const stale = await api("PATCH", `/v1/agents/${agent.id}`, { key, body: { displayName: "Stale", version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("version_conflict");
  });

  it("a manual wake travels through the queue and completes", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const wake = await api("POST", `/v1/agents/${agent.id}/wake`, { key });
    expect(wake.status).toBe(202);
    const run = await waitForRun(key, agent.id, wake.body.runKey);
    expect(run).toMatchObject({ status: "completed", reason: "manual" });
  });

  it("lists agents with cursor pagination", async () => {
    const { key } = await createTenant();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await createAgent(key, { displayName: `A${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await api("GET", `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key });
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((a: any) => a.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(ids.sort());
    expect((await api("GET", "/v1/agents?cursor=garbage", { key })).status).toBe(400);
    expect((await api("GET", "/v1/agents?limit=0", { key })).status).toBe(400);
  });

  it("state reflects completed runs", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "x" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const state = await eventually(async () => {
      const res = await api("GET", `/v1/agents/${agent.id}/state`, { key });
      return res.body.revision >= 1 ? res.body : undefined;
    });
    expect(state.lastWakeAt).not.toBeNull();
    expect(state.recentHeadMessageId).toMatch(/^[0-9a-f]{64}$/);
  });
});
