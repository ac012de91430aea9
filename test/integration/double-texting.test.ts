import { describe, expect, it } from "vitest";
import { api, createAgent, createTaskCommand, createTenant, eventually, openEvents, playbookAgentInCategory, readSseUntil, taskTitlesIn } from "./helpers";

/** A reply streamed word by word this slowly (about 4 s) keeps the first run in flight while the next messages arrive, even on a loaded machine. */
const SLOW = { modelOptions: { chunkDelayMs: 250 } };
const LONG_TEXT = "a long first message that keeps the agent busy for a couple of seconds at least";
const TERMINAL = ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal", "interrupted"];

async function send(key: string, agentId: string, text: string, extra: Record<string, unknown> = {}) {
  return api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text, sessionId: "s1", ...extra } });
}

async function sent(key: string, agentId: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await send(key, agentId, text, extra);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.runKey;
}

/** Polls gently: the per-key rate limit would refuse a 25 ms cadence over seconds. */
const poll = <T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000) => eventually(check, timeoutMs, 200);

const settled = (key: string, agentId: string, runKey: string) =>
  poll(async () => {
    const res = await api("GET", `/v1/agents/${agentId}/runs/${runKey}`, { key });
    return res.status === 200 && TERMINAL.includes(res.body.status) ? res.body : undefined;
  });

const thread = async (key: string, agentId: string) => ((await api("GET", `/v1/agents/${agentId}/messages?sessionId=s1&limit=100`, { key })).body.data as any[]).reverse();

/** The agent's event log from the start, until `done` sees what it needs. */
async function eventsUntil(key: string, agentId: string, done: (frames: Array<{ event: string; data: any }>) => boolean) {
  return readSseUntil(await openEvents(key, agentId, { after: 0 }), done, 15_000);
}

describe("double texting: a message while a run of the same session is in flight", () => {
  it("enqueue (the default): the message gets its own run after the first, and the stream shows turn.queued", async () => {
    const { key } = await createTenant("dt-enqueue");
    const agent = await createAgent(key, SLOW);
    expect(agent.config.doubleTexting).toBe("enqueue");
    const first = await sent(key, agent.id, LONG_TEXT);
    const second = await sent(key, agent.id, "second");
    const [a, b] = [await settled(key, agent.id, first), await settled(key, agent.id, second)];
    expect([a.status, b.status]).toEqual(["completed", "completed"]);
    expect(b.trace.coalescedInto).toBeUndefined();
    expect((await thread(key, agent.id)).map((m) => [m.kind, m.text])).toEqual([
      ["user", LONG_TEXT],
      ["assistant", `echo: ${LONG_TEXT}`],
      ["user", "second"],
      ["assistant", "echo: second"],
    ]);
    const frames = await eventsUntil(key, agent.id, (f) => f.some((e) => e.event === "turn.queued"));
    expect(frames.find((e) => e.event === "turn.queued")?.data).toMatchObject({ runKey: second, data: { runKey: second, policy: "enqueue", inFlight: [first] } });
  });

  it("reject: 409 run_in_progress for the same session only, per-message override, nothing recorded", async () => {
    const { key } = await createTenant("dt-reject");
    const agent = await createAgent(key, { ...SLOW, doubleTexting: "reject" });
    const first = await sent(key, agent.id, LONG_TEXT);
    const refused = await send(key, agent.id, "too soon");
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body.code).toBe("run_in_progress");
    // Another session of the same agent is not affected.
    expect((await send(key, agent.id, "other session", { sessionId: "s2" })).status).toBe(202);
    // The message's own policy wins over the agent's.
    const queued = await sent(key, agent.id, "queued anyway", { doubleTexting: "enqueue" });
    await settled(key, agent.id, first);
    await settled(key, agent.id, queued);
    expect((await thread(key, agent.id)).map((m) => m.text)).not.toContain("too soon");
    const frames = await eventsUntil(key, agent.id, (f) => f.some((e) => e.event === "turn.rejected"));
    expect(frames.find((e) => e.event === "turn.rejected")?.data).toMatchObject({ runKey: first, data: { sessionId: "s1", policy: "reject", inFlight: [first] } });
    // Nothing in flight any more: accepted.
    await sent(key, agent.id, "now it is fine");
  });

  it("merge: messages that queued behind a run are answered by one run, each runKey kept", async () => {
    const { key } = await createTenant("dt-merge");
    const agent = await createAgent(key, SLOW);
    const first = await sent(key, agent.id, LONG_TEXT);
    const second = await sent(key, agent.id, "and also this", { doubleTexting: "merge" });
    const third = await sent(key, agent.id, "and this too", { doubleTexting: "merge" });
    const runs = [await settled(key, agent.id, first), await settled(key, agent.id, second), await settled(key, agent.id, third)];
    expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"]);
    expect(runs[1].trace.coalescedRunKeys).toEqual([third]);
    expect(runs[2].trace.coalescedInto).toBe(second);
    expect((await thread(key, agent.id)).map((m) => [m.kind, m.text])).toEqual([
      ["user", LONG_TEXT],
      ["assistant", `echo: ${LONG_TEXT}`],
      ["user", "and also this"],
      ["user", "and this too"],
      ["assistant", "echo: and this too"],
    ]);
    const frames = await eventsUntil(key, agent.id, (f) => f.some((e) => e.event === "turn.merged"));
    expect(frames.filter((e) => e.event === "turn.queued").map((e) => e.data.data.policy)).toEqual(["merge", "merge"]);
    expect(frames.find((e) => e.event === "turn.merged")?.data).toMatchObject({ runKey: third, data: { runKey: third, into: second } });
  });

  it("interrupt: a queued run of the session ends interrupted (its text kept), the new message runs after, with it in context", async () => {
    const { key } = await createTenant("dt-interrupt");
    const agent = await createAgent(key, { ...SLOW, doubleTexting: "interrupt" });
    const first = await sent(key, agent.id, LONG_TEXT, { doubleTexting: "enqueue" });
    const queued = await sent(key, agent.id, "never mind this one", { doubleTexting: "enqueue" });
    const latest = await sent(key, agent.id, "do this instead");
    const [a, b, c] = [await settled(key, agent.id, first), await settled(key, agent.id, queued), await settled(key, agent.id, latest)];
    // The running run's only step was already under way: it finishes; the queued one stops at its first boundary.
    expect(a.status).toBe("completed");
    expect(b).toMatchObject({ status: "interrupted", errorCode: "interrupted", trace: { stopReason: "interrupted", interruptedBy: latest } });
    expect(c.status).toBe("completed");
    expect(Date.parse(c.startedAt)).toBeGreaterThanOrEqual(Date.parse(b.endedAt));
    expect((await thread(key, agent.id)).map((m) => [m.kind, m.text])).toEqual([
      ["user", LONG_TEXT],
      ["assistant", `echo: ${LONG_TEXT}`],
      ["user", "never mind this one"],
      ["user", "do this instead"],
      ["assistant", "echo: do this instead"],
    ]);
    const frames = await eventsUntil(key, agent.id, (f) => f.some((e) => e.event === "run.interrupted"));
    expect(frames.find((e) => e.event === "turn.interrupting")?.data).toMatchObject({ runKey: latest, data: { interrupts: [first, queued] } });
    expect(frames.find((e) => e.event === "run.interrupted")?.data).toMatchObject({ runKey: queued, data: { interruptedBy: latest } });
  });

  it("interrupt while a saga waits for approval: the approval is cancelled, the tool never runs, the run ends interrupted", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory("orchestrator");
    const parked = await sent(key, agent.id, createTaskCommand(categoryId, "Climb"));
    const decision = await poll(async () => (await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key })).body.data.find((d: any) => d.runKey === parked));
    await poll(async () => (await api("GET", `/v1/agents/${agent.id}/runs/${parked}`, { key })).body.status === "waiting");

    const latest = await sent(key, agent.id, "forget the climb", { doubleTexting: "interrupt" });
    const [a, b] = [await settled(key, agent.id, parked), await settled(key, agent.id, latest)];
    expect(a).toMatchObject({ status: "interrupted", trace: { interruptedBy: latest } });
    expect(b.status).toBe("completed");

    const cancelled = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data.find((d: any) => d.id === decision.id);
    expect(cancelled).toMatchObject({ status: "cancelled", resolution: { resolvedBy: "interrupted" } });
    expect((await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "approve" } })).body.code).toBe("decision_not_pending");
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);

    // The interrupted run's call and its cancelled result sit in the thread before the new message, which ran after.
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key })).body.data.reverse() as any[];
    const kinds = messages.map((m) => (m.kind === "toolResult" ? `toolResult:${m.content.ok ? "ok" : m.content.code}` : m.kind === "user" ? `user:${m.text}` : m.kind));
    expect(kinds.slice(0, 4)).toEqual([`user:${createTaskCommand(categoryId, "Climb")}`, "action", "toolResult:cancelled", "user:forget the climb"]);
    expect(Date.parse(b.startedAt)).toBeGreaterThanOrEqual(Date.parse(a.endedAt));
  });

  it("an approval answered before the interrupt still runs its tool once; the run then stops at its boundary", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory("orchestrator");
    const parked = await sent(key, agent.id, createTaskCommand(categoryId, "Row"));
    const decision = await poll(async () => (await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key })).body.data.find((d: any) => d.runKey === parked));
    expect((await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "approve" } })).status).toBe(200);
    const latest = await sent(key, agent.id, "stop now", { doubleTexting: "interrupt" });
    const [a, b] = [await settled(key, agent.id, parked), await settled(key, agent.id, latest)];
    expect(b.status).toBe("completed");
    // Either the run had already replied (completed) or it stopped at the boundary after its tool: never a lost effect.
    expect(["completed", "interrupted"]).toContain(a.status);
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Row"]);
    const resolved = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data.find((d: any) => d.id === decision.id);
    expect(resolved.status).toBe("resolved");
  });
});
