import { beforeAll, describe, expect, it } from "vitest";
import { VigilApiError, VigilClient, type AgentEvent } from "../../src/client";
import { collectSse, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;
let client: VigilClient;
let apiKey: string;

beforeAll(async () => {
  server = sharedServer();
  ({ client, apiKey } = await server.tenant("events"));
});

interface Connection {
  method: string;
  url: string;
  lastEventId: string | null;
  /** What the consumer had last received when this connection was opened. */
  consumerLastSeq: number | null;
}

/**
 * A fetch that drops SSE connections mid-stream, the way a flaky network does: after `dropAfterIds`
 * frames with an id it passes half of the next chunk (a torn frame) and then errors the body.
 */
function flakyFetch(options: { dropAfterIds: number; maxDrops: number; replaceLastEventId?: string; consumerLastSeq?: () => number | null }) {
  const connections: Connection[] = [];
  let drops = 0;
  const impl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    connections.push({ method: init?.method ?? "GET", url: String(input), lastEventId: headers.get("last-event-id"), consumerLastSeq: options.consumerLastSeq?.() ?? null });
    if (options.replaceLastEventId !== undefined && headers.has("last-event-id")) headers.set("last-event-id", options.replaceLastEventId);
    const response = await fetch(input, { ...init, headers });
    if (!response.body || !(response.headers.get("content-type") ?? "").includes("text/event-stream") || drops >= options.maxDrops) return response;
    drops++;
    return new Response(tear(response.body, options.dropAfterIds), { status: response.status, headers: response.headers });
  };
  return { impl, connections, drops: () => drops };
}

function tear(body: ReadableStream<Uint8Array>, afterIds: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let ids = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const text = decoder.decode(value, { stream: true });
      for (const match of text.matchAll(/(?:^|\n)id: /g)) {
        if (ids < afterIds) {
          ids++;
          continue;
        }
        // Tear inside the next frame with an id: its first line arrives, the rest never does.
        controller.enqueue(encoder.encode(text.slice(0, match.index + match[0].length + 1)));
        await reader.cancel();
        controller.error(new TypeError("simulated network drop"));
        return;
      }
      controller.enqueue(encoder.encode(text));
    },
    cancel: () => reader.cancel(),
  });
}

async function completedRun(agentId: string, text: string): Promise<string> {
  const { runKey } = await client.sendMessage(agentId, { text });
  await client.waitForRun(agentId, runKey);
  return runKey;
}

function openEvents(agentId: string, init: { lastEventId?: string; query?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: "text/event-stream" };
  if (init.lastEventId !== undefined) headers["last-event-id"] = init.lastEventId;
  return fetch(`${server.url}/v1/agents/${agentId}/events${init.query ?? ""}`, { headers });
}

function expectContiguous(seqs: number[], from: number): void {
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => from + i));
}

describe("agent event stream (SSE)", () => {
  it("replays after Last-Event-ID or ?after=, then goes live with the next run", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Narrator" });
    const firstRun = await completedRun(agent.id, "first");

    const full = await collectSse(await openEvents(agent.id), (frames) => frames.some((f) => f.event === "run.completed"));
    const ids = full.map((f) => Number(f.id));
    expectContiguous(ids, 1);
    expect(full[0]!.event).toBe("lifecycle.changed");
    expect(full.at(-1)).toMatchObject({ event: "run.completed", data: { runKey: firstRun, seq: ids.at(-1) } });
    expect(full.every((f) => f.data.seq === Number(f.id) && f.data.type === f.event)).toBe(true);
    const last = ids.at(-1)!;
    const middle = Math.floor(last / 2);

    const response = await openEvents(agent.id, { lastEventId: String(middle) });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const live = collectSse(response, (frames) => frames.filter((f) => f.event === "run.completed").length === 2);
    const secondRun = await completedRun(agent.id, "second");
    const frames = await live;
    const replayed = frames.filter((f) => f.id !== undefined && Number(f.id) <= last);
    expect(replayed.map((f) => Number(f.id))).toEqual(ids.slice(middle));
    const liveFrames = frames.filter((f) => f.id === undefined || Number(f.id) > last);
    expect(liveFrames.filter((f) => f.id !== undefined).every((f) => f.data.runKey === secondRun)).toBe(true);
    expect(liveFrames.some((f) => f.event === "text.delta" && f.id === undefined)).toBe(true);
    expect(liveFrames.at(-1)).toMatchObject({ event: "run.completed", data: { runKey: secondRun } });
    expectContiguous(frames.filter((f) => f.id !== undefined).map((f) => Number(f.id)), middle + 1);

    const viaQuery = await collectSse(await openEvents(agent.id, { query: `?after=${middle}` }), (all) => all.filter((f) => f.event === "run.completed").length === 2);
    expect(viaQuery.map((f) => f.id)).toEqual(frames.filter((f) => f.id !== undefined).map((f) => f.id));
    // text.delta is live-only: never replayed.
    expect(viaQuery.some((f) => f.event === "text.delta")).toBe(false);
  });

  it("a client that drops and reconnects with its last id misses nothing and sees nothing twice", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Flaky", modelOptions: { chunkDelayMs: 15 } });
    let lastSeq: number | null = null;
    const flaky = flakyFetch({ dropAfterIds: 3, maxDrops: 4, consumerLastSeq: () => lastSeq });
    const reader = new VigilClient({ baseUrl: server.url, token: apiKey, fetch: flaky.impl });
    const stream = reader.events(agent.id, { reconnect: { initialDelayMs: 20 }, signal: AbortSignal.timeout(30_000) });
    const texts = ["one two three", "four five six", "seven eight nine"];
    const producer = (async () => {
      const keys: string[] = [];
      for (const text of texts) keys.push(await completedRun(agent.id, text));
      return keys;
    })();
    const seen: AgentEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.seq !== null) lastSeq = event.seq;
      if (seen.filter((e) => e.type === "run.completed").length === texts.length) break;
    }
    const runKeys = await producer;

    expect(flaky.drops()).toBe(4);
    const persisted = seen.filter((e) => e.seq !== null);
    const seqs = persisted.map((e) => e.seq!);
    expectContiguous(seqs, 1);
    expect(persisted.filter((e) => e.type === "run.completed").map((e) => e.runKey)).toEqual(runKeys);
    // Each reconnect resumed exactly where the consumer was.
    const reconnects = flaky.connections.slice(1);
    expect(reconnects.length).toBeGreaterThanOrEqual(4);
    expect(flaky.connections[0]!.lastEventId).toBeNull();
    for (const connection of reconnects) {
      expect(connection.consumerLastSeq).not.toBeNull();
      expect(connection.lastEventId).toBe(String(connection.consumerLastSeq));
    }
    expect(stream.lastEventId).toBe(String(seqs.at(-1)));

    // The same log read in one go is identical.
    const straight = await collectSse(await openEvents(agent.id), (frames) => frames.filter((f) => f.event === "run.completed").length === texts.length);
    expect(straight.map((f) => [Number(f.id), f.event])).toEqual(persisted.map((e) => [e.seq, e.type]));
  });

  it("a server that replays from an older position never makes the client yield an event twice", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Replayer" });
    await completedRun(agent.id, "history to replay");
    const flaky = flakyFetch({ dropAfterIds: 2, maxDrops: 3, replaceLastEventId: "0" });
    const reader = new VigilClient({ baseUrl: server.url, token: apiKey, fetch: flaky.impl });
    const seen: AgentEvent[] = [];
    for await (const event of reader.events(agent.id, { reconnect: { initialDelayMs: 10 }, signal: AbortSignal.timeout(20_000) })) {
      seen.push(event);
      if (event.type === "run.completed") break;
    }
    expect(flaky.drops()).toBe(3);
    expect(flaky.connections.length).toBeGreaterThanOrEqual(4);
    expectContiguous(seen.map((e) => e.seq!), 1);
  });

  it("streamMessage finishes the run from the event log when its own connection drops mid-reply", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Storyteller", modelOptions: { chunkDelayMs: 60 } });
    const flaky = flakyFetch({ dropAfterIds: 2, maxDrops: 1 });
    const talker = new VigilClient({ baseUrl: server.url, token: apiKey, fetch: flaky.impl });
    const words = "a reply long enough to be cut in the middle of its stream".split(" ");
    const run = talker.streamMessage(agent.id, { text: words.join(" ") }, { reconnect: { initialDelayMs: 20 }, signal: AbortSignal.timeout(30_000) });
    const events: AgentEvent[] = [];
    for await (const event of run) events.push(event);
    const runKey = await run.runKey;

    expect(flaky.connections.map((c) => c.method)).toEqual(["POST", "GET"]);
    expect(flaky.connections[1]!.url).toContain(`/v1/agents/${agent.id}/events`);
    expect(flaky.connections[1]!.lastEventId).toMatch(/^\d+$/);
    expect(events.at(-1)).toMatchObject({ type: "run.completed", runKey });
    expect(events.every((e) => e.runKey === runKey)).toBe(true);
    const seqs = events.filter((e) => e.seq !== null).map((e) => e.seq!);
    expect(new Set(seqs).size).toBe(seqs.length);
    const reply = events.find((e) => e.type === "message.appended" && (e.data.message as { kind: string }).kind === "assistant");
    expect((reply?.data.message as { text: string }).text).toBe(`echo: ${words.join(" ")}`);
  });

  it("a connection that goes silent (half-open) is detected by the idle timeout and reopened", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Quiet" });
    const runKey = await completedRun(agent.id, "anyone there?");
    let connections = 0;
    const stalling: typeof fetch = async (input, init) => {
      connections++;
      if (connections > 1) return fetch(input, init);
      // The first connection says hello and then nothing ever arrives, as on a dead TCP path.
      const signal = init?.signal;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(": connected\n\n"));
          signal?.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")), { once: true });
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    };
    const reader = new VigilClient({ baseUrl: server.url, token: apiKey, fetch: stalling });
    const started = Date.now();
    const seen: AgentEvent[] = [];
    // The idle timeout must outlast the real second connection's first bytes (its replay) on a loaded machine, or
    // that connection too would be abandoned: a few seconds, where the server's heartbeat is 15 s.
    const idleTimeoutMs = 3_000;
    for await (const event of reader.events(agent.id, { reconnect: { initialDelayMs: 10, idleTimeoutMs }, signal: AbortSignal.timeout(60_000) })) {
      seen.push(event);
      if (event.type === "run.completed") break;
    }
    expect(connections).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(idleTimeoutMs);
    expect(seen.at(-1)).toMatchObject({ type: "run.completed", runKey });
    expectContiguous(seen.map((e) => e.seq!), 1);
  });

  it("streams refuse unknown agents and bad resume points with a problem, without retrying", async () => {
    const flaky = flakyFetch({ dropAfterIds: 1, maxDrops: 0 });
    const reader = new VigilClient({ baseUrl: server.url, token: apiKey, fetch: flaky.impl });
    const error = await (async () => {
      for await (const _ of reader.events("ag_missing0000000000")) throw new Error("no event expected");
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VigilApiError);
    expect((error as VigilApiError).status).toBe(404);
    expect(flaky.connections).toHaveLength(1);

    const agent = await client.createAgent({ kind: "coach", displayName: "Strict" });
    const bad = await (async () => {
      for await (const _ of reader.events(agent.id, { after: "-3" })) throw new Error("no event expected");
    })().catch((caught: unknown) => caught);
    expect(bad).toBeInstanceOf(VigilApiError);
    expect((bad as VigilApiError).code).toBe("validation_failed");
  });
});
