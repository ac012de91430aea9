import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { agentDo, createAgent, createTenant, inDo, openEvents, readSseUntil } from "./helpers";

/** Far in the future, so no real DO alarm armed for a retry can fire while the test runs. */
const T0 = Date.now() + 10 * 86_400_000;

const headSeq = (tenantId: string, agentId: string) => inDo(agentDo(tenantId, agentId), (instance: AgentDO) => instance.parts.events.headSeq());
type Frame = { id?: number; event: string; data: any };
const ids = (frames: Frame[]) => frames.filter((f) => f.id !== undefined).map((f) => f.id!);

describe("live SSE frames leave only after the transaction that wrote them committed", () => {
  it("an event appended in a transaction that rolls back (or in a savepoint that does) never reaches a subscriber; the committed ones do, once, and replay from any id seen misses none", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const live = await openEvents(key, agent.id, { after: await headSeq(tenantId, agent.id) });
    await inDo(agentDo(tenantId, agent.id), (instance: AgentDO) => {
      const { events, db } = instance.parts;
      expect(() =>
        db.transaction(() => {
          events.append("state.changed", null, { note: "rolled back" });
          throw new Error("undo");
        }),
      ).toThrow("undo");
      db.transaction((tx) => {
        events.append("state.changed", null, { note: "kept outer" });
        try {
          tx.transaction(() => {
            events.append("state.changed", null, { note: "rolled back savepoint" });
            throw new Error("undo inner");
          });
        } catch {
          // The savepoint is undone; the outer transaction goes on and commits.
        }
        events.append("state.changed", null, { note: "kept after savepoint" });
      });
    });
    const frames = await readSseUntil(live, (seen) => seen.some((f) => f.data?.data?.note === "kept after savepoint"));
    const notes = frames.filter((f) => f.event === "state.changed").map((f) => f.data.data.note);
    expect(notes).toEqual(["kept outer", "kept after savepoint"]);
    // Each seq a subscriber saw belongs to exactly the event it saw: resuming after the one before gives it back.
    const seen = ids(frames);
    expect(new Set(seen).size).toBe(seen.length);
    const resumed = await readSseUntil(await openEvents(key, agent.id, { lastEventId: seen[0]! - 1 }), (got) => got.some((f) => f.data?.data?.note === "kept after savepoint"));
    expect(resumed.filter((f) => f.event === "state.changed").map((f) => f.data.data.note)).toEqual(notes);
    expect(ids(resumed)).toEqual(seen);
  });

  it("a summary commit that throws after its message was appended sends no frame for it; the retried commit's frame is the one stored", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    const stub = agentDo(tenantId, agent.id) as any;
    const thread = "t-frames";
    await runInDurableObject(stub, async (instance: AgentDO) => {
      for (let i = 0; i < 50; i++) instance.parts.history.append({ id: `${thread}-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `message ${i}: a long enough line to fill the hot tier of this thread.` });
    });
    const live = await openEvents(key, agent.id, { after: await headSeq(tenantId, agent.id) });
    expect(await stub.armFault("compaction.afterSummaryAppend")).toBe(true);
    const failed = await stub.compactNow(thread, T0);
    expect(failed).toMatchObject({ ok: true, committed: 0, failed: 1 });
    const retryAt = await runInDurableObject(stub, (_instance: AgentDO, state) => state.storage.sql.exec<{ at: number }>("SELECT next_attempt_at AS at FROM compaction_jobs").one().at);
    const retried = await stub.compactNow(null, retryAt);
    expect(retried.committed).toBeGreaterThanOrEqual(1);

    // Read until a second summary frame would have come (or a while after the first): exactly one comes.
    const isSummary = (f: Frame) => f.event === "message.appended" && f.data.data.message.kind === "summary";
    const frames = await readSseUntil(live, (seen) => seen.filter(isSummary).length >= 2, 2_000);
    const summaries = frames.filter((f) => f.event === "message.appended" && f.data.data.message.kind === "summary");
    const stored = await runInDurableObject(stub, (_instance: AgentDO, state) =>
      state.storage.sql.exec<{ seq: number }>("SELECT events.seq + item.key AS seq FROM events, json_each(events.items) AS item WHERE item.value ->> '$[0]' = 'message.appended'").toArray().map((row) => row.seq),
    );
    // One frame per stored summary append (none from the rolled-back attempt), each under the seq it is stored at.
    expect(summaries.length).toBe(1);
    expect(stored).toContain(summaries[0]!.id);
    const seen = ids(frames);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
