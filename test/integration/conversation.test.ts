import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, parseSse, waitForRun } from "./helpers";

describe("a conversation", () => {
  it("answers a message with builtin:echo and records a completed run", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hello" } });
    expect(sent.status).toBe(202);
    expect(sent.body.runKey).toMatch(/^[0-9a-f]{64}$/);
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    const history = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(history.body.data.map((m: any) => [m.kind, m.text])).toEqual([
      ["assistant", "echo: hello"],
      ["user", "hello"],
    ]);
    expect(history.body.data[0].metadata.prevMessageId).toBe(history.body.data[1].id);
  });

  it("streams a run as SSE when asked with Accept: text/event-stream", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const res = await api("POST", `/v1/agents/${agent.id}/messages`, {
      key,
      body: { text: "stream this reply" },
      headers: { accept: "text/event-stream" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = parseSse(res.body);
    const deltas = frames.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta);
    expect(deltas.join("")).toBe("echo: stream this reply");
    expect(frames.at(-1)?.event).toBe("run.completed");
    expect(frames.filter((f) => f.event === "text.delta").every((f) => f.id === undefined)).toBe(true);
  });
});
