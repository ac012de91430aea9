import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, openEvents, readSseUntil } from "./helpers";

/** Reads an SSE body as raw blocks until one carries `until` in its data (then cancels it). */
async function readBlocks(response: Response, until: string, timeoutMs = 20_000): Promise<string[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline && !text.split("\n\n").slice(0, -1).some((block) => block.includes(until))) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.split("\n\n").slice(0, -1);
}

const frames = (blocks: string[]) => blocks.filter((block) => block.split("\n").some((line) => line.startsWith("data: ")));
const dataOf = (block: string) => JSON.parse(block.split("\n").find((line) => line.startsWith("data: "))!.slice(6));

describe("?format=message: event streams as plain EventSource message events", () => {
  it("sends every agent event once, unnamed, with its type in the data; ids unchanged", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const plain = await SELF.fetch(`https://vigil.test/v1/agents/${agent.id}/events?format=message`, { headers: { authorization: `Bearer ${key}` } });
    expect(plain.status).toBe(200);
    const named = await openEvents(key, agent.id);
    await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } });
    const blocks = frames(await readBlocks(plain, '"type":"run.completed"'));
    const namedFrames = await readSseUntil(named, (seen) => seen.some((f) => f.event === "run.completed"));
    expect(blocks.every((block) => !block.split("\n").some((line) => line.startsWith("event:")))).toBe(true);
    const types = blocks.map((block) => dataOf(block).type);
    expect(types).toEqual(namedFrames.map((f) => f.event));
    expect(types).toContain("text.delta");
    expect(new Set(blocks.filter((b) => b.startsWith("id: ")).map((b) => b.split("\n")[0])).size).toBe(blocks.filter((b) => b.startsWith("id: ")).length);
    expect(blocks.filter((b) => b.startsWith("id: ")).map((b) => Number(b.split("\n")[0]!.slice(4)))).toEqual(namedFrames.filter((f) => f.id !== undefined).map((f) => f.id));
  });

  it("does the same on the tenant-wide stream", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const plain = await SELF.fetch("https://vigil.test/v1/events/stream?format=message", { headers: { authorization: `Bearer ${key}` } });
    await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hi" } });
    const blocks = frames(await readBlocks(plain, '"type":"run.completed"'));
    expect(blocks.length).toBeGreaterThan(2);
    expect(blocks.every((block) => !block.includes("\nevent:") && !block.startsWith("event:"))).toBe(true);
    expect(blocks.map((block) => dataOf(block).agentId)).toEqual(blocks.map(() => agent.id));
  });

  it("refuses an unknown format as a problem", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const res = await api("GET", `/v1/agents/${agent.id}/events?format=xml`, { key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
  });
});
