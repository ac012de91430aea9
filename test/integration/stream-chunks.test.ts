import { describe, expect, it } from "vitest";
import { agentDo, createAgent, createTenant, inDo, parseSse } from "./helpers";

/** Every chunk a stream yields until it ends, as text. */
async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(decoder.decode(read.value));
  return chunks;
}

/**
 * An agent's SSE streams write the frames of one stretch of work as one chunk (issue 12 §8, "Streaming turn (session
 * 13)"): every chunk took its own turns through the pipe to the Worker and its response, and locally the run's report
 * and the tenant's commit ran on the same thread between them, ahead of `run.completed`.
 */
describe("an agent's SSE stream", () => {
  it("carries a builtin-model streaming turn, every frame up to run.completed, in one chunk after the connection comment", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id) as unknown as { submitTurn(turn: Record<string, unknown>): Promise<any> };
    const turn = (text: string) => stub.submitTurn({ text, sessionId: "s1", turnId: `turn-${text}`, credential: "apiKey", stream: true });
    await chunksOf((await turn("warm")).stream);

    const result = await turn("hello there");
    expect(result.ok).toBe(true);
    const chunks = await chunksOf(result.stream);
    // The connection comment is written when the stream is made (it is handed over with its first bytes).
    expect(chunks[0]).toBe(": connected\n\n");
    const frames = parseSse(chunks.join(""));
    expect(frames.map((f) => f.event).filter((e) => e !== "text.delta")).toEqual(["wake.enqueued", "run.started", "message.appended", "message.appended", "state.changed", "run.completed"]);
    expect(frames.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta).join("")).toBe("echo: hello there");
    expect(chunks).toHaveLength(2);
  });

  it("writes each stretch's frames when that stretch ends, so a live stream is not held back until it closes", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await inDo(agentDo(tenantId, agent.id), async (instance) => {
      const events = instance.parts.events;
      const reader = (events.subscribe("live", { runKey: "r1", closeOn: ["run.completed"] }) as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      const next = async () => decoder.decode((await reader.read()).value);
      events.append("run.started", "r1", { runKey: "r1" });
      events.live("text.delta", "r1", { delta: "a" });
      events.append("run.started", "other-run", { runKey: "other-run" });
      expect(await next()).toBe(": connected\n\n");
      // One stretch: both frames of r1 come as one chunk, while the stream stays open.
      expect(parseSse(await next()).map((f) => f.event)).toEqual(["run.started", "text.delta"]);
      events.live("text.delta", "r1", { delta: "b" });
      expect(parseSse(await next()).map((f) => [f.event, f.data.data.delta])).toEqual([["text.delta", "b"]]);
      // The closing frame goes out with what its stretch queued before it, and the stream ends after it.
      events.live("text.delta", "r1", { delta: "c" });
      events.append("run.completed", "r1", { runKey: "r1" });
      events.live("text.delta", "r1", { delta: "after the end" });
      expect(parseSse(await next()).map((f) => f.event)).toEqual(["text.delta", "run.completed"]);
      expect((await reader.read()).done).toBe(true);
    });
  });
});
