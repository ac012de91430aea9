import { describe, expect, it } from "vitest";
import { agentDo, api, createAgent, createTenant, inDo, openEvents, readSseUntil, waitForRun } from "./helpers";

const TEXT = "a fairly distinctive sentence that should be stored exactly once";
const persisted = (frames: Array<{ id?: number; event: string; data: any }>) => frames.filter((f) => f.id !== undefined);

describe("stored agent events refer to messages and runs (issue 12 §5)", () => {
  it("stores ids instead of bodies, and live, replayed and exported events are identical", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const live = await openEvents(key, agent.id, { after: 0 });
    const posted = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: TEXT } });
    expect(posted.status).toBe(202);
    const runKey = posted.body.runKey as string;
    const liveFrames = persisted(await readSseUntil(live, (frames) => frames.some((f) => f.event === "run.completed" && f.data.runKey === runKey)));
    await waitForRun(key, agent.id, runKey);

    // What the log stores: the message id and the run key, no text and no run view.
    const rows = await inDo(agentDo(tenantId, agent.id), (_instance, state) =>
      state.storage.sql
        .exec<{ type: string; data: string }>(
          "SELECT item.value ->> '$[0]' AS type, item.value -> '$[2]' AS data FROM events, json_each(events.items) AS item WHERE item.value ->> '$[0]' IN ('message.appended', 'run.completed') ORDER BY events.seq, item.key",
        )
        .toArray(),
    );
    expect(rows.map((r) => r.type)).toEqual(["message.appended", "message.appended", "run.completed"]);
    for (const row of rows) {
      expect(row.data).not.toContain("distinctive");
      expect(row.data).toContain("$ref");
      expect(row.data.split(runKey).length - 1).toBeLessThanOrEqual(1); // the run key lives in its column, not repeated in the data
      expect(row.data.length).toBeLessThan(runKey.length + 80); // ids and status only
    }

    // Replay (a fresh subscriber from seq 0) answers exactly what went out live.
    const replayed = persisted(await readSseUntil(await openEvents(key, agent.id, { after: 0 }), (frames) => frames.some((f) => f.event === "run.completed" && f.data.runKey === runKey)));
    expect(replayed).toEqual(liveFrames);
    const reply = replayed.find((f) => f.event === "message.appended" && f.data.data.message.kind === "assistant");
    expect(reply?.data.data.message.text).toBe(`echo: ${TEXT}`);
    const completed = replayed.find((f) => f.event === "run.completed")!;
    expect(Object.keys(completed.data.data)).toEqual(["runKey", "status", "errorCode", "run"]);
    expect(completed.data.data.run).toMatchObject({ runKey, status: "completed" });

    // The export's events section is the hydrated log too.
    const exported = await api("GET", `/v1/agents/${agent.id}/export`, { key });
    expect(exported.status).toBe(200);
    const exportedEvents = (exported.body.events as any[]).filter((e) => e.seq <= liveFrames.at(-1)!.id!);
    expect(exportedEvents).toEqual(liveFrames.map((f) => f.data));
  });
  // The tenant stream's copy is hydrated by the forwarder: tenant-stream.test.ts reads the reply's text from it.
});
