import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, openEvents, readSseUntil, waitForRun } from "./helpers";

const completedCount = (frames: Array<{ event: string }>) => frames.filter((f) => f.event === "run.completed").length;

describe("the agent event stream", () => {
  it("replays the log with monotonic ids, then delivers live events", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "one" } });
    await waitForRun(key, agent.id, first.body.runKey);

    const stream = await openEvents(key, agent.id);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reading = readSseUntil(stream, (frames) => completedCount(frames) === 2);
    const second = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "two" } });
    const frames = await reading;
    const ids = frames.filter((f) => f.id !== undefined).map((f) => f.id!);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(frames.some((f) => f.event === "text.delta" && f.data.runKey === second.body.runKey)).toBe(true);
    expect(frames.filter((f) => f.event === "run.completed").map((f) => f.data.runKey)).toEqual([first.body.runKey, second.body.runKey]);
  });

  it("resumes after Last-Event-ID or ?after= without gaps or repeats", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    for (const text of ["a", "b", "c"]) {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      await waitForRun(key, agent.id, sent.body.runKey);
    }
    const all = await readSseUntil(await openEvents(key, agent.id), (frames) => completedCount(frames) === 3);
    const persisted = all.filter((f) => f.id !== undefined);
    const cut = persisted[Math.floor(persisted.length / 2)]!.id!;

    const viaHeader = await readSseUntil(await openEvents(key, agent.id, { lastEventId: cut }), (frames) => completedCount(frames) >= 1 && frames.at(-1)?.event === "run.completed" && frames.at(-1)?.data.runKey === persisted.at(-1)?.data.runKey);
    const viaQuery = await readSseUntil(await openEvents(key, agent.id, { after: cut }), (frames) => frames.at(-1)?.id === persisted.at(-1)?.id);
    const expected = persisted.filter((f) => f.id! > cut).map((f) => f.id);
    expect(viaHeader.map((f) => f.id)).toEqual(expected);
    expect(viaQuery.map((f) => f.id)).toEqual(expected);
  });

  it("rejects a malformed Last-Event-ID", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const res = await api("GET", `/v1/agents/${agent.id}/events`, { key, headers: { "last-event-id": "abc" } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
  });
});
