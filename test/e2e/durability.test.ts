import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VigilApiError, type AgentEvent, type Message, type VigilClient } from "../../src/client";
import { collectSse, DevServer, eventually, tenantRunsEnded } from "./harness";

let server: DevServer;

beforeAll(async () => {
  server = await DevServer.start();
});

afterAll(async () => {
  await server?.dispose();
});

async function eventLog(apiKey: string, agentId: string, untilRunCompleted: string): Promise<Array<{ id?: string; event: string; data: any }>> {
  const response = await fetch(`${server.url}/v1/agents/${agentId}/events`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(response.status).toBe(200);
  return collectSse(response, (frames) => frames.some((f) => f.event === "run.completed" && f.data.runKey === untilRunCompleted));
}

async function snapshot(client: VigilClient, agentId: string) {
  return {
    keys: await client.listKeys(),
    agents: await client.listAgents({ limit: 200 }),
    agent: await client.getAgent(agentId),
    state: await client.getAgentState(agentId),
    messages: await client.listMessages(agentId, { limit: 200 }),
    runs: await client.listRuns(agentId, { limit: 200 }),
  };
}

describe("durability", () => {
  it("a graceful stop and start keeps tenants, keys, agents, state, messages, events and runs", async () => {
    const { client, apiKey } = await server.tenant("durable");
    const revoked = await client.createKey({ name: "old" });
    await client.revokeKey(revoked.id);
    const agent = await client.createAgent({ kind: "coach", displayName: "Keeper" });
    await client.updateAgent(agent.id, { displayName: "Keeper v2", version: 1 });
    const sleeper = await client.createAgent({ kind: "coach", displayName: "Sleeper" });
    await client.pauseAgent(sleeper.id);
    await client.waitForRun(agent.id, (await client.sendMessage(agent.id, { text: "remember me" })).runKey);
    const lastRun = (await client.sendMessage(agent.id, { text: "and me", sessionId: "second" })).runKey;
    await client.waitForRun(agent.id, lastRun);
    const widget = await client.mintToken({ sub: "user", agents: [agent.id] });

    const before = await snapshot(client, agent.id);
    const eventsBefore = await eventLog(apiKey, agent.id, lastRun);
    expect(before.messages.data).toHaveLength(4);
    expect(before.state.revision).toBe(2);

    await server.restart();

    const after = await snapshot(client, agent.id);
    expect(after).toEqual(before);
    expect(await eventLog(apiKey, agent.id, lastRun)).toEqual(eventsBefore);
    await expect(client.getAgent(sleeper.id)).resolves.toMatchObject({ lifecycle: "dormant" });
    const refused = await client.withToken(revoked.key).listAgents().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(VigilApiError);
    expect((refused as VigilApiError).status).toBe(401);
    await expect(client.withToken(widget.token).getAgent(agent.id)).resolves.toMatchObject({ displayName: "Keeper v2" });

    // The agent carries on where it was: the event seq continues, the chain links to the old head.
    const next = await client.sendMessage(agent.id, { text: "after restart" });
    await expect(client.waitForRun(agent.id, next.runKey)).resolves.toMatchObject({ status: "completed" });
    const newest = (await client.listMessages(agent.id, { limit: 2, sessionId: "default" })).data;
    expect(newest.map((m: Message) => m.text)).toEqual(["echo: after restart", "after restart"]);
    expect(newest[1]!.metadata.prevMessageId).toBe(before.messages.data.find((m) => m.text === "echo: remember me")!.id);
    const events = await eventLog(apiKey, agent.id, next.runKey);
    expect(events.map((f) => Number(f.id))).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
  });

});

/** Posts a streamed message and reads it until `deltas` words have arrived: the run is mid-flight. */
async function startSlowRun(apiKey: string, agentId: string, text: string, deltas = 3): Promise<string> {
  const response = await fetch(`${server.url}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ text }),
  });
  const runKey = response.headers.get("x-vigil-run-key")!;
  expect(runKey).toMatch(/^[0-9a-f]{64}$/);
  const streamed = await collectSse(response, (frames) => frames.filter((f) => f.event === "text.delta").length >= deltas);
  expect(streamed.filter((f) => f.event === "text.delta").length).toBeGreaterThanOrEqual(deltas);
  expect(streamed.some((f) => f.event === "run.completed")).toBe(false);
  return runKey;
}

describe("a crash (SIGKILL of the whole server) in the middle of runs", () => {
  const words = Array.from({ length: 24 }, (_, i) => `word${i}`);
  let client: VigilClient;
  let apiKey: string;
  let polled: { agentId: string; runKey: string };
  let untouched: { agentId: string; runKey: string };
  const followed: AgentEvent[] = [];
  let following: Promise<void>;

  beforeAll(async () => {
    const tenant = await server.tenant("crash");
    client = tenant.client;
    apiKey = tenant.apiKey;
    const polledAgent = await client.createAgent({ kind: "coach", displayName: "Polled", modelOptions: { chunkDelayMs: 200 } });
    const untouchedAgent = await client.createAgent({ kind: "coach", displayName: "Untouched", modelOptions: { chunkDelayMs: 150 } });

    // A follower on the polled agent's event log, reconnecting through the crash.
    const follower = client.events(polledAgent.id, { reconnect: { initialDelayMs: 100, maxDelayMs: 500, maxAttempts: 400 }, signal: AbortSignal.timeout(90_000) });
    let runKey = "";
    following = (async () => {
      for await (const event of follower) {
        followed.push(event);
        if (event.type === "run.completed" && event.runKey === runKey) return;
      }
    })();

    // Both runs must still be in flight at the kill: each streams for seconds (24 chunks), far longer than the
    // few requests between its start and the kill take even on a loaded machine.
    const untouchedRun = await startSlowRun(tenant.apiKey, untouchedAgent.id, words.join(" "), 2);
    runKey = await startSlowRun(tenant.apiKey, polledAgent.id, words.join(" "));
    polled = { agentId: polledAgent.id, runKey };
    untouched = { agentId: untouchedAgent.id, runKey: untouchedRun };
    await expect(client.getRun(polled.agentId, polled.runKey)).resolves.toMatchObject({ status: "running", attempt: 1 });
    await expect(client.getRun(untouched.agentId, untouched.runKey)).resolves.toMatchObject({ status: "running", attempt: 1 });

    const group = server.pid;
    await server.kill();
    // Nothing of the killed server survives: not wrangler, not workerd.
    expect(server.groupAlive(group)).toBe(false);
    await server.launch();
  });

  it("the interrupted run resumes to completed, once, when polled; a follower misses nothing", async () => {
    const { agentId, runKey } = polled;
    const run = await eventually(async () => {
      const current = await client.getRun(agentId, runKey);
      return ["queued", "running"].includes(current.status) ? null : current;
    }, 60_000, 250);
    expect(run).toMatchObject({ status: "completed", errorCode: null });
    expect(run.attempt).toBeGreaterThanOrEqual(2);
    expect(run.trace.resumed).toBe(true);

    const messages = (await client.listMessages(agentId)).data.filter((m) => m.metadata.runKey === runKey);
    expect(messages.map((m) => [m.kind, m.text])).toEqual([
      ["assistant", `echo: ${words.join(" ")}`],
      ["user", words.join(" ")],
    ]);
    await expect(client.getAgentState(agentId)).resolves.toMatchObject({ revision: 1, consecutiveFailureCount: 0 });

    await following;
    const persisted = followed.filter((e) => e.seq !== null);
    expect(persisted.map((e) => e.seq)).toEqual(Array.from({ length: persisted.length }, (_, i) => i + 1));
    expect(persisted.filter((e) => e.type === "run.started" && e.runKey === runKey).map((e) => e.data.attempt)).toEqual([1, run.attempt]);
    expect(persisted.filter((e) => e.type === "run.completed" || e.type === "run.failed")).toHaveLength(1);
    expect(persisted.filter((e) => e.type === "message.appended")).toHaveLength(2);

    // Not stuck: the agent takes the next turn normally.
    const next = await client.sendMessage(agentId, { text: "still alive?" });
    await expect(client.waitForRun(agentId, next.runKey)).resolves.toMatchObject({ status: "completed", attempt: 1 });
  });

  it("an agent nobody touches after the restart finishes its interrupted run on its own (watchdog alarm)", async () => {
    // The watchdog alarm is armed when the wake is taken. Its end is awaited on the tenant's run counters (the
    // TenantDO), which never touch the agent: three runs end in this tenant, the polled one, its "still alive?" turn
    // and this one. Only then is the agent itself read.
    const { seenAt } = await tenantRunsEnded(server.url, apiKey, 3, 100_000);
    const run = await client.getRun(untouched.agentId, untouched.runKey);
    expect(run).toMatchObject({ status: "completed", trace: { resumed: true } });
    expect(Date.parse(run.endedAt!)).toBeLessThanOrEqual(seenAt);
  });
});
