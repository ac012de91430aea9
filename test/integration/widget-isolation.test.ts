import { describe, expect, it } from "vitest";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import { api, createAgent, createTenant, openEvents, readSseUntil, waitForRun } from "./helpers";

/**
 * Widget session isolation (docs/decisions.md): two visitors of one public chat widget hold tokens for
 * the same agent; neither may read, stream, send into or answer the other's conversation. An API key
 * still sees every session.
 */
/** A message ending in "?" makes the agent's playbook ask it back (a visitor's own `/tool` lines never run). */
const ASK = (question: string) => question;
const ASK_RULE = { when: { textPattern: "\\?$" }, tools: [{ name: "ask_user", args: { question: "{{text}}", options: [{ id: "mon", label: "Monday" }] } }], reply: "asked" };
type Frame = { id?: number; event: string; data: any };
const completed = (runKey: string) => (frames: Frame[]) => frames.some((f) => f.event === "run.completed" && f.data.runKey === runKey);

async function setup() {
  const { key } = await createTenant("widget-isolation");
  const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [{ when: { reason: "toolResult" }, reply: "noted" }, ASK_RULE, { when: {}, reply: "echo {{text}}" }] } });
  const mint = async (sub: string) => (await api("POST", "/v1/tokens", { key, body: { sub, agents: [agent.id], ttlSeconds: 600 } })).body.token as string;
  return { key, agent, visitorA: await mint("visitor-a"), visitorB: await mint("visitor-b") };
}

async function say(token: string, agentId: string, text: string, sessionId?: string) {
  return api("POST", `/v1/agents/${agentId}/messages`, { key: token, body: { text, ...(sessionId ? { sessionId } : {}) } });
}

const texts = (page: any) => (page.body.data as any[]).map((m) => m.text).filter(Boolean) as string[];

describe("widget tokens are confined to their own conversation", () => {
  it("messages: a visitor reads and sends only in its own sessions; an API key sees all", async () => {
    const { key, agent, visitorA, visitorB } = await setup();
    const sentA = await say(visitorA, agent.id, "secret of A");
    const sentB = await say(visitorB, agent.id, "secret of B");
    expect(sentA.status).toBe(202);
    expect(sentB.status).toBe(202);
    await waitForRun(key, agent.id, sentA.body.runKey);
    await waitForRun(key, agent.id, sentB.body.runKey);

    const sessionA = widgetSessionId("visitor-a");
    const sessionB = widgetSessionId("visitor-b");
    const historyA = await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key: visitorA });
    expect(historyA.status).toBe(200);
    expect(texts(historyA)).toContain("secret of A");
    expect(texts(historyA).join("\n")).not.toContain("secret of B");
    expect((historyA.body.data as any[]).every((m) => m.threadId === `${agent.id}:session:${sessionA}`)).toBe(true);
    // "default" is the visitor's own session, not the agent's shared one.
    expect(texts(await api("GET", `/v1/agents/${agent.id}/messages?sessionId=default`, { key: visitorA }))).toEqual(texts(historyA));

    // Naming B's session or thread looks like absence, for reads and for sends.
    expect((await api("GET", `/v1/agents/${agent.id}/messages?sessionId=${sessionB}`, { key: visitorA })).status).toBe(404);
    expect((await api("GET", `/v1/agents/${agent.id}/messages?threadId=${encodeURIComponent(`${agent.id}:session:${sessionB}`)}`, { key: visitorA })).status).toBe(404);
    expect((await api("GET", `/v1/agents/${agent.id}/messages?threadId=${encodeURIComponent(`${agent.id}:run:x`)}`, { key: visitorA })).status).toBe(404);
    const intrusion = await say(visitorA, agent.id, "injected by A", sessionB);
    expect(intrusion.status).toBe(404);
    expect((await say(visitorA, agent.id, "shared session", "support")).status).toBe(404);

    // A named session inside A's own namespace works.
    const named = await say(visitorA, agent.id, "second chat of A", widgetSessionId("visitor-a", "second"));
    expect(named.status).toBe(202);
    await waitForRun(key, agent.id, named.body.runKey);
    expect(texts(await api("GET", `/v1/agents/${agent.id}/messages?sessionId=${widgetSessionId("visitor-a", "second")}`, { key: visitorA }))).toContain("second chat of A");

    const historyB = await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key: visitorB });
    expect(texts(historyB)).toContain("secret of B");
    expect(texts(historyB).join("\n")).not.toMatch(/secret of A|injected by A|second chat of A/);

    // The operator's API key is unchanged: every thread, any session, runs and the tenant stream.
    const all = texts(await api("GET", `/v1/agents/${agent.id}/messages?limit=100`, { key }));
    expect(all).toEqual(expect.arrayContaining(["secret of A", "secret of B", "second chat of A"]));
    expect(texts(await api("GET", `/v1/agents/${agent.id}/messages?sessionId=${sessionB}`, { key }))).toContain("secret of B");
    expect((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).status).toBe(200);

    // Runs (inputs and traces of every session), memory search and the tenant-wide stream are API-key only.
    expect((await api("GET", `/v1/agents/${agent.id}/runs`, { key: visitorA })).status).toBe(403);
    expect((await api("GET", `/v1/agents/${agent.id}/runs/${sentB.body.runKey}`, { key: visitorA })).status).toBe(403);
    expect((await api("GET", "/v1/events/stream", { key: visitorA })).status).toBe(403);
    // Recall over every session's messages too.
    expect((await api("GET", `/v1/agents/${agent.id}/memory/search?q=secret`, { key: visitorA })).status).toBe(403);
    expect((await api("GET", `/v1/agents/${agent.id}/memory/search?q=secret`, { key })).status).toBe(200);
  });

  it("events: a visitor's stream replays and delivers live only its own runs' events", async () => {
    const { key, agent, visitorA, visitorB } = await setup();
    const earlyB = await say(visitorB, agent.id, "early B");
    await waitForRun(key, agent.id, earlyB.body.runKey);
    const earlyA = await say(visitorA, agent.id, "early A");
    await waitForRun(key, agent.id, earlyA.body.runKey);

    // Replay: B's earlier run is in the log before A's, and never shown to A.
    const replay = await readSseUntil(await openEvents(visitorA, agent.id), completed(earlyA.body.runKey));
    expect(completed(earlyA.body.runKey)(replay)).toBe(true);
    expect(replay.length).toBeGreaterThan(1);
    expect(replay.every((f) => f.data.runKey === earlyA.body.runKey)).toBe(true);

    // Live: B's whole run happens while A's stream is open, before A's own run.
    const liveA = openEvents(visitorA, agent.id, { after: replay.at(-1)!.id! });
    const liveStream = await liveA;
    const reading = readSseUntil(liveStream, (frames) => frames.some((f) => f.event === "run.completed"));
    const lateB = await say(visitorB, agent.id, "late B");
    await waitForRun(key, agent.id, lateB.body.runKey);
    const lateA = await say(visitorA, agent.id, "late A");
    const live = await reading;
    expect(completed(lateA.body.runKey)(live)).toBe(true);
    expect(live.some((f) => f.event === "text.delta")).toBe(true);
    expect(live.every((f) => f.data.runKey === lateA.body.runKey)).toBe(true);
    expect(JSON.stringify(live)).not.toContain("late B");

    // The API key's stream still carries both visitors' runs.
    const operator = await readSseUntil(await openEvents(key, agent.id), (frames) => completed(lateA.body.runKey)(frames));
    expect(completed(lateB.body.runKey)(operator)).toBe(true);
    expect(completed(earlyB.body.runKey)(operator)).toBe(true);
  });

  it("decisions: a visitor lists and answers only its own conversation's decisions", async () => {
    const { key, agent, visitorA, visitorB } = await setup();
    const askB = await say(visitorB, agent.id, ASK("B private question?"));
    await waitForRun(key, agent.id, askB.body.runKey);
    const askA = await say(visitorA, agent.id, ASK("A private question?"));
    await waitForRun(key, agent.id, askA.body.runKey);
    // An operator conversation on the shared default session is no visitor's either.
    const askOp = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: ASK("Operator question?") } });
    await waitForRun(key, agent.id, askOp.body.runKey);

    const operatorView = (await api("GET", "/v1/decisions?status=pending", { key })).body.data as any[];
    const question = (q: string) => operatorView.find((d) => d.payload.question === q);
    expect(operatorView).toHaveLength(3);

    const listedA = await api("GET", "/v1/decisions?status=pending", { key: visitorA });
    expect(listedA.status).toBe(200);
    expect((listedA.body.data as any[]).map((d) => d.payload.question)).toEqual(["A private question?"]);
    const listedB = (await api("GET", "/v1/decisions", { key: visitorB })).body.data as any[];
    expect(listedB.map((d) => d.payload.question)).toEqual(["B private question?"]);

    for (const other of [question("B private question?"), question("Operator question?")]) {
      const answered = await api("POST", `/v1/decisions/${other.id}/resolve`, { key: visitorA, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
      expect(answered.status).toBe(404);
    }
    const stillPending = ((await api("GET", "/v1/decisions?status=pending", { key })).body.data as any[]).map((d) => d.payload.question);
    expect(stillPending).toEqual(expect.arrayContaining(["B private question?", "Operator question?"]));

    const own = await api("POST", `/v1/decisions/${question("A private question?").id}/resolve`, { key: visitorA, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(own.status).toBe(200);
    expect(own.body.resolution).toMatchObject({ actor: "jwt:visitor-a" });
    // The API key still answers anyone's.
    expect((await api("POST", `/v1/decisions/${question("B private question?").id}/resolve`, { key, body: { resolutionType: "reject" } })).status).toBe(200);
  });
});
