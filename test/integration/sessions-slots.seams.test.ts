import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import type { AgentEvent } from "../../src/schema/agents/runs";
import { api, createAgent, createTenant, readSseUntil, waitForRun } from "./helpers";

/** Issue 13.9: interactive sessions (inactivity TTL, explicit close) and registered extension slot keys. */
const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

async function setup(name = "sessions") {
  const { tenantId, key } = await createTenant(name);
  const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [{ when: { reason: "toolResult" }, reply: "noted" }, { when: {}, reply: "echo {{text}}" }] } });
  return { tenantId, key, agent, stub: agentDo(tenantId, agent.id) };
}

/** Sends with `key` (an API key or a widget token); waits for the run with `readKey` (runs are API-key only). */
async function say(key: string, agentId: string, text: string, sessionId?: string, readKey = key) {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text, ...(sessionId ? { sessionId } : {}) } });
  expect(sent.status).toBe(202);
  return waitForRun(readKey, agentId, sent.body.runKey);
}

async function sessionEvents(stub: ReturnType<typeof agentDo>): Promise<AgentEvent[]> {
  return ((await stub.listEvents(0, 1_000)) as AgentEvent[]).filter((event) => event.type.startsWith("session."));
}

async function expirySchedules(stub: ReturnType<typeof agentDo>): Promise<number[]> {
  return runInDurableObject(stub, async (instance: AgentDO) => (await instance.listSchedules()).filter((row) => row.callback === "onSessionExpiry").map((row) => row.time * 1000));
}

const close = (key: string, agentId: string, sid: string) => api("POST", `/v1/agents/${agentId}/sessions/${encodeURIComponent(sid)}/close`, { key });

describe("session inactivity TTL", () => {
  it("arms the agent's alarm at last activity + the tenant's TTL, closes on expiry with session.closed, and a new message reopens", async () => {
    const { key, agent, stub } = await setup();
    expect((await api("PUT", "/v1/policy", { key, body: { sessions: { idleTtlSeconds: 120 } } })).status).toBe(200);
    const before = Date.now();
    await say(key, agent.id, "hello", "s1");
    const after = Date.now();
    const [armedAt, ...others] = await expirySchedules(stub);
    expect(others).toEqual([]);
    // The tenant policy's 120 s, not the deployment default (1 800 s); whole seconds, rounded up.
    expect(armedAt).toBeGreaterThanOrEqual(before + 120_000);
    expect(armedAt).toBeLessThanOrEqual(after + 121_000);

    expect(await stub.expireSessions(after + 60_000)).toEqual({ ok: true, closed: 0, more: false });
    expect(await sessionEvents(stub)).toEqual([]);
    expect(await stub.expireSessions(after + 121_000)).toEqual({ ok: true, closed: 1, more: false });
    const closed = await sessionEvents(stub);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ type: "session.closed", runKey: null, data: { sessionId: "s1", threadId: `${agent.id}:session:s1`, reason: "idle_timeout" } });
    // Nothing open: no expiry schedule left.
    expect(await expirySchedules(stub)).toEqual([]);
    // Closing again is idempotent: same answer, no second event.
    const again = await close(key, agent.id, "s1");
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ sessionId: "s1", status: "closed", closeReason: "idle_timeout", expiresAt: null });
    expect(await sessionEvents(stub)).toHaveLength(1);

    // A message to the closed session reopens it (and is answered) rather than being refused.
    const reply = await say(key, agent.id, "back again", "s1");
    expect(reply.status).toBe("completed");
    expect((await sessionEvents(stub)).map((event) => event.type)).toEqual(["session.closed", "session.reopened"]);
    expect(await expirySchedules(stub)).toHaveLength(1);
  });

  it("closes due sessions in bounded batches and re-arms until none is due", async () => {
    const { agent, stub } = await setup("sessions-batch");
    const now = Date.now();
    await runInDurableObject(stub, async (instance: AgentDO) => {
      const sessions = (instance as any).parts.sessions;
      // 101 sessions idle for two minutes with a one-minute TTL (all overdue), one fresh session.
      for (let i = 0; i < 101; i++) sessions.touch(`bulk-${i}`, `${agent.id}:session:bulk-${i}`, 60, now - 120_000);
      sessions.touch("fresh", `${agent.id}:session:fresh`, 3_600, now);
      await sessions.arm();
    });
    const first = await stub.expireSessions(now);
    expect(first).toEqual({ ok: true, closed: 100, more: true });
    // The backlog re-arms soon (the next whole second at the latest), not at the fresh session's deadline.
    const [soon] = await expirySchedules(stub);
    expect(soon).toBeLessThanOrEqual(Date.now() + 2_000);
    expect(await stub.expireSessions(now)).toEqual({ ok: true, closed: 1, more: false });
    // One schedule stays, no later than the fresh session's deadline (an earlier one finds nothing due and re-arms there).
    const rest = await expirySchedules(stub);
    expect(rest).toHaveLength(1);
    expect(rest[0]).toBeLessThanOrEqual(Math.ceil((now + 3_600_000) / 1000) * 1000);
    const closed = (await sessionEvents(stub)).filter((event) => event.type === "session.closed");
    expect(closed).toHaveLength(101);
    expect(closed.every((event) => event.data.reason === "idle_timeout" && String(event.data.sessionId).startsWith("bulk-"))).toBe(true);
  });
});

describe("explicit session close", () => {
  it("closes once with session.closed, is idempotent, and answers 404 for unknown sessions, agents and other tenants", async () => {
    const { key, agent, stub } = await setup("sessions-close");
    await say(key, agent.id, "hi", "chat-1");
    expect((await close(key, agent.id, "never-used")).status).toBe(404);
    const first = await close(key, agent.id, "chat-1");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ sessionId: "chat-1", threadId: `${agent.id}:session:chat-1`, status: "closed", closeReason: "explicit", expiresAt: null });
    const second = await close(key, agent.id, "chat-1");
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const events = await sessionEvents(stub);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "session.closed", data: { sessionId: "chat-1", reason: "explicit" } });
    // The tenant-wide stream carries it too (session id and reason only).
    const stream = await SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}` } });
    const frames = await readSseUntil(stream, (all) => all.some((f) => f.event === "session.closed"));
    expect(frames.find((f) => f.event === "session.closed")!.data).toMatchObject({ agentId: agent.id, data: { sessionId: "chat-1", reason: "explicit" } });
    // The TTL does not close it a second time.
    expect(await stub.expireSessions(Date.now() + 86_400_000)).toMatchObject({ closed: 0 });

    expect((await close(key, "agent_missing", "chat-1")).status).toBe(404);
    const other = await createTenant("sessions-other");
    const probe = await close(other.key, agent.id, "chat-1");
    expect(probe.status).toBe(404);
    expect(probe.headers.get("content-type")).toContain("application/problem+json");
    expect(probe.body.code).toBe("not_found");
    expect((await close(key, agent.id, "bad id with spaces")).status).toBe(400);
  });
});
