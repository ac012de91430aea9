import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import type { AgentEvent } from "../../src/schema/agents/runs";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

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

const close = (key: string, agentId: string, sid: string) => api("POST", `/v1/agents/${agentId}/sessions/${encodeURIComponent(sid)}/close`, { key });

describe("session inactivity TTL", () => {
  it("the real alarm (Agents SDK schedule) closes a session whose deadline passed", async () => {
    const { agent, stub } = await setup("sessions-alarm");
    await runInDurableObject(stub, async (instance: AgentDO) => {
      // Last activity 10 s ago with a 1 s TTL: already overdue, so the schedule sits at the next whole second.
      const sessions = (instance as any).parts.sessions;
      sessions.touch("late", `${agent.id}:session:late`, 1, Date.now() - 10_000);
      await sessions.arm();
    });
    const event = await eventually(async () => {
      await runDurableObjectAlarm(stub);
      return (await sessionEvents(stub)).find((e) => e.type === "session.closed");
    });
    expect(event).toMatchObject({ data: { sessionId: "late", reason: "idle_timeout" } });
  });
});

describe("explicit session close", () => {
  it("a widget token closes only its own visitor's session", async () => {
    const { key, agent, stub } = await setup("sessions-widget");
    const mint = async (sub: string) => (await api("POST", "/v1/tokens", { key, body: { sub, agents: [agent.id], ttlSeconds: 600 } })).body.token as string;
    const visitorA = await mint("visitor-a");
    const visitorB = await mint("visitor-b");
    await say(visitorA, agent.id, "A speaks", undefined, key);
    await say(key, agent.id, "operator chat", "support");
    const sessionA = widgetSessionId("visitor-a");

    // B cannot close A's session (by id), the operator's session, or its own session before it exists.
    expect((await close(visitorB, agent.id, sessionA)).status).toBe(404);
    expect((await close(visitorB, agent.id, "support")).status).toBe(404);
    expect((await close(visitorB, agent.id, "default")).status).toBe(404);
    expect(await sessionEvents(stub)).toEqual([]);

    // A closes its own ("default" names its base session).
    const closed = await close(visitorA, agent.id, "default");
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ sessionId: sessionA, status: "closed", closeReason: "explicit" });
    const events = await sessionEvents(stub);
    expect(events.map((event) => event.data.sessionId)).toEqual([sessionA]);
    // The operator's session is untouched.
    expect((await close(key, agent.id, "support")).body).toMatchObject({ status: "closed", closeReason: "explicit" });
  });
});

describe("registered extension slot keys", () => {
  const registry = {
    "gym.weeklyTarget": { schema: { type: "integer", minimum: 1, maximum: 14 }, maxChars: 4, description: "sessions per week" },
    "crm.note": { schema: { type: "string" }, maxChars: 12 },
  };
  const putSlot = (key: string, agentId: string, value: unknown) => api("PUT", `/v1/agents/${agentId}/memory/slots/extension`, { key, body: { value } });

  it("the tenant policy registers keys with a JSON Schema and a size cap; malformed registrations are refused", async () => {
    const { key } = await createTenant("slots-policy");
    const badSchema = await api("PUT", "/v1/policy", { key, body: { extensionSlots: { "gym.weeklyTarget": { schema: { type: "nope" } } } } });
    expect(badSchema.status).toBe(400);
    expect(JSON.stringify(badSchema.body)).toContain("extensionSlots.gym.weeklyTarget.schema");
    const remoteRef = await api("PUT", "/v1/policy", { key, body: { extensionSlots: { "gym.x": { schema: { $ref: "https://example.com/s.json" } } } } });
    expect(remoteRef.status).toBe(400);
    expect((await api("PUT", "/v1/policy", { key, body: { extensionSlots: { weeklyTarget: { schema: {} } } } })).status).toBe(400);
    expect((await api("PUT", "/v1/policy", { key, body: { extensionSlots: { "gym.x": { schema: {}, maxChars: 100_000 } } } })).status).toBe(400);
    const ok = await api("PUT", "/v1/policy", { key, body: { extensionSlots: registry } });
    expect(ok.status).toBe(200);
    expect(ok.body.extensionSlots["gym.weeklyTarget"]).toMatchObject({ maxChars: 4 });
  });

  it("the slots API validates extension values against the registry: unregistered keys, schema and size cap", async () => {
    const { key, agent } = await setup("slots-api");
    const before = await putSlot(key, agent.id, { "gym.weeklyTarget": 3 });
    expect(before.status).toBe(400);
    expect(before.body.code).toBe("invalid_slot");
    expect(JSON.stringify(before.body)).toContain("not registered");

    expect((await api("PUT", "/v1/policy", { key, body: { extensionSlots: registry } })).status).toBe(200);
    const written = await putSlot(key, agent.id, { "gym.weeklyTarget": 3, "crm.note": "call Tue" });
    expect(written.status).toBe(200);
    expect(written.body).toEqual({ slot: "extension", version: 1, changed: true });
    const outOfRange = await putSlot(key, agent.id, { "gym.weeklyTarget": 99 });
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.body.errors?.[0]?.path ?? JSON.stringify(outOfRange.body)).toContain("gym.weeklyTarget");
    const tooLong = await putSlot(key, agent.id, { "crm.note": "0123456789A" });
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain("at most 12");
    expect((await putSlot(key, agent.id, { "gym.unknown": 1 })).status).toBe(400);
    const memory = await api("GET", `/v1/agents/${agent.id}/memory`, { key });
    expect(memory.body.slots).toMatchObject({ extension: { "gym.weeklyTarget": 3, "crm.note": "call Tue" }, extensionVersion: 1 });
  });

  it("memory_update_slot validates against the same registry", async () => {
    const { key, agent } = await setup("slots-tool");
    const toolResult = async (args: unknown) => {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool memory_update_slot ${JSON.stringify(args)}` } });
      expect(sent.status).toBe(202);
      await waitForRun(key, agent.id, sent.body.runKey);
      const messages = (await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key })).body.data as any[];
      return messages.find((m) => m.kind === "toolResult" && m.metadata.runKey === sent.body.runKey)!.content;
    };
    const unregistered = await toolResult({ slot: "extension", value: { "gym.weeklyTarget": 5 } });
    expect(unregistered).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(unregistered.message).toContain("not registered");

    expect((await api("PUT", "/v1/policy", { key, body: { extensionSlots: registry } })).status).toBe(200);
    const invalid = await toolResult({ slot: "extension", value: { "gym.weeklyTarget": 0 } });
    expect(invalid).toMatchObject({ ok: false, code: "invalid_slot" });
    expect(invalid.message).toContain("gym.weeklyTarget");
    const tooLong = await toolResult({ slot: "extension", value: { "crm.note": "far too long a note" } });
    expect(tooLong).toMatchObject({ ok: false, code: "invalid_slot" });
    const valid = await toolResult({ slot: "extension", value: { "gym.weeklyTarget": 5 } });
    expect(valid).toMatchObject({ ok: true, output: { slot: "extension", version: 1, changed: true } });
    expect((await api("GET", `/v1/agents/${agent.id}/memory`, { key })).body.slots.extension).toEqual({ "gym.weeklyTarget": 5 });
  });
});
