import { beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent, Message, VigilClient } from "../../src/client";
import { raw, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;
let client: VigilClient;
let apiKey: string;

beforeAll(async () => {
  server = sharedServer();
  ({ client, apiKey } = await server.tenant("conversation"));
});

async function allMessages(agentId: string, query: { sessionId?: string } = {}): Promise<Message[]> {
  const page = await client.listMessages(agentId, { limit: 200, ...query });
  expect(page.nextCursor).toBeNull();
  return page.data;
}

describe("conversation", () => {
  it("concurrent messages all complete, one run after the other, and none is lost", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Busy", modelOptions: { chunkDelayMs: 20 } });
    const texts = ["alpha one", "bravo two", "charlie three", "delta four", "echo five"];
    const accepted = await Promise.all(texts.map((text) => client.sendMessage(agent.id, { text })));
    const runKeys = accepted.map((a) => a.runKey);
    expect(new Set(runKeys).size).toBe(texts.length);

    const runs = await Promise.all(runKeys.map((runKey) => client.waitForRun(agent.id, runKey)));
    expect(runs.map((run) => run.status)).toEqual(texts.map(() => "completed"));
    // Single-flight: ordered by start, each run starts only after the previous one ended.
    const byStart = [...runs].sort((a, b) => Date.parse(a.startedAt!) - Date.parse(b.startedAt!));
    for (let i = 1; i < byStart.length; i++) {
      expect(Date.parse(byStart[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(byStart[i - 1]!.endedAt!));
    }

    const oldestFirst = (await allMessages(agent.id)).reverse();
    expect(oldestFirst).toHaveLength(texts.length * 2);
    for (let i = 0; i < oldestFirst.length; i += 2) {
      const [user, reply] = [oldestFirst[i]!, oldestFirst[i + 1]!];
      expect(user.kind).toBe("user");
      expect(reply).toMatchObject({ kind: "assistant", text: `echo: ${user.text}` });
      expect(reply.metadata.runKey).toBe(user.metadata.runKey);
      expect(user.metadata.runKey).toBe(byStart[i / 2]!.runKey);
    }
    expect(oldestFirst.filter((m) => m.kind === "user").map((m) => m.text).sort()).toEqual([...texts].sort());
    // Messages are one linked chain per thread.
    for (let i = 1; i < oldestFirst.length; i++) expect(oldestFirst[i]!.metadata.prevMessageId).toBe(oldestFirst[i - 1]!.id);
    expect(oldestFirst[0]!.metadata.prevMessageId).toBeNull();
  });

  it("with Accept: text/event-stream the reply streams as text.delta frames and ends with run.completed", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Streamer", modelOptions: { chunkDelayMs: 10 } });
    const run = client.streamMessage(agent.id, { text: "please stream this reply" });
    const events: AgentEvent[] = [];
    for await (const event of run) events.push(event);
    const runKey = await run.runKey;
    expect(runKey).toMatch(/^[0-9a-f]{64}$/);

    const deltas = events.filter((e) => e.type === "text.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((e) => e.seq === null && e.runKey === runKey)).toBe(true);
    expect(deltas.map((e) => e.data.delta).join("")).toBe("echo: please stream this reply");
    expect(events.at(-1)).toMatchObject({ type: "run.completed", runKey, data: { status: "completed" } });
    const persisted = events.filter((e) => e.seq !== null).map((e) => e.seq!);
    expect(persisted).toEqual([...persisted].sort((a, b) => a - b));
    expect(new Set(persisted).size).toBe(persisted.length);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["run.started", "message.appended", "run.completed"]));
    await expect(client.getRun(agent.id, runKey)).resolves.toMatchObject({ status: "completed", reason: "userInitiated" });
  });

  it("the streaming response is SSE with the run's key in a header", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Raw" });
    const response = await fetch(`${server.url}/v1/agents/${agent.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ text: "raw stream" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const runKey = response.headers.get("x-vigil-run-key");
    expect(runKey).toMatch(/^[0-9a-f]{64}$/);
    const text = await response.text();
    expect(text).toContain("event: run.completed");
    expect(text.trimEnd().endsWith("}")).toBe(true);
    expect(text).toContain(`"runKey":"${runKey}"`);
  });

  it("a retried streaming POST with the same Idempotency-Key replays that run instead of starting another", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Retry" });
    const post = () =>
      fetch(`${server.url}/v1/agents/${agent.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "text/event-stream", "idempotency-key": "stream-turn-1" },
        body: JSON.stringify({ text: "say it once" }),
      });
    const first = await post();
    const firstText = await first.text();
    const second = await post();
    expect(second.status).toBe(200);
    expect(second.headers.get("x-vigil-run-key")).toBe(first.headers.get("x-vigil-run-key"));
    const secondText = await second.text();
    expect(secondText).toContain("event: run.completed");
    // The replay carries the same persisted events (same ids), without a second run.
    const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
    expect(ids(secondText).length).toBeGreaterThan(0);
    expect(ids(secondText).every((id) => ids(firstText).includes(id))).toBe(true);
    expect((await client.listRuns(agent.id)).data).toHaveLength(1);
    expect((await allMessages(agent.id)).map((m) => m.text)).toEqual(["echo: say it once", "say it once"]);
  });

  it("history pages newest first through nextCursor, and each session is its own thread", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Historian" });
    const plan = [
      { text: "one", sessionId: "s1" },
      { text: "two", sessionId: "s2" },
      { text: "three", sessionId: "s1" },
      { text: "four", sessionId: "s1" },
    ];
    for (const message of plan) {
      const { runKey } = await client.sendMessage(agent.id, message);
      await client.waitForRun(agent.id, runKey);
    }
    const everything = await allMessages(agent.id);
    expect(everything.map((m) => m.text)).toEqual(["echo: four", "four", "echo: three", "three", "echo: two", "two", "echo: one", "one"]);

    const paged: Message[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const page = await client.listMessages(agent.id, { limit: 3, ...(cursor ? { cursor } : {}) });
      sizes.push(page.data.length);
      paged.push(...page.data);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(sizes).toEqual([3, 3, 2]);
    expect(paged.map((m) => m.id)).toEqual(everything.map((m) => m.id));

    const s1 = await allMessages(agent.id, { sessionId: "s1" });
    expect(s1.map((m) => m.text)).toEqual(["echo: four", "four", "echo: three", "three", "echo: one", "one"]);
    expect(new Set(s1.map((m) => m.threadId))).toEqual(new Set([`${agent.id}:session:s1`]));
    const s2 = await allMessages(agent.id, { sessionId: "s2" });
    expect(s2.map((m) => m.text)).toEqual(["echo: two", "two"]);
    // A session's chain links only its own messages.
    expect(s2[1]!.metadata.prevMessageId).toBeNull();

    const byThread = await raw<any>(`${server.url}/v1/agents/${agent.id}/messages?threadId=${encodeURIComponent(`${agent.id}:session:s2`)}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(byThread.body.data.map((m: Message) => m.id)).toEqual(s2.map((m) => m.id));
  });
});
