import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, openEvents, readSseUntil, waitForRun } from "./helpers";

/** The chat widget loads a history page, then follows /events from the seq that page says it is consistent with. */
describe("history and event stream hand-over (x-vigil-event-seq)", () => {
  it("a history page names the event seq it reflects: resuming there repeats none of its messages and misses none after", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const empty = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(empty.headers.get("x-vigil-event-seq")).toMatch(/^\d+$/);

    for (const text of ["one", "two"]) {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      await waitForRun(key, agent.id, sent.body.runKey);
    }
    const page = await api("GET", `/v1/agents/${agent.id}/messages?sessionId=default`, { key });
    const seq = Number(page.headers.get("x-vigil-event-seq"));
    expect(seq).toBeGreaterThan(Number(empty.headers.get("x-vigil-event-seq")));
    const shown = new Set((page.body.data as Array<{ id: string }>).map((message) => message.id));
    expect(shown.size).toBe(4);

    // Everything up to the header's seq is already in the page; the stream from there brings only what came later.
    const everything = await readSseUntil(await openEvents(key, agent.id), (frames) => frames.filter((f) => f.event === "run.completed").length === 2);
    const appendedBefore = everything.filter((f) => f.event === "message.appended");
    expect(appendedBefore.map((f) => f.data.data.message.id).sort()).toEqual([...shown].sort());
    expect(appendedBefore.every((f) => f.id! <= seq)).toBe(true);

    const stream = await openEvents(key, agent.id, { lastEventId: seq });
    const reading = readSseUntil(stream, (frames) => frames.some((f) => f.event === "run.completed"));
    const third = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "three" } });
    const frames = await reading;
    const appended = frames.filter((f) => f.event === "message.appended").map((f) => f.data.data.message as { id: string; text: string });
    expect(appended.map((message) => message.text)).toEqual(["three", "echo: three"]);
    expect(appended.some((message) => shown.has(message.id))).toBe(false);
    expect(frames.filter((f) => f.id !== undefined).every((f) => f.id! > seq)).toBe(true);
    expect(frames.find((f) => f.event === "run.completed")?.data.runKey).toBe(third.body.runKey);
  });
});
