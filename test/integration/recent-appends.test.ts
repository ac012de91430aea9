import { describe, expect, it } from "vitest";
import { agentDo, createAgent, createTenant, eventually, inDo, recordStatements, freshInstance } from "./helpers";

/** The stored event rows after `after`, as the forwarder reads them. */
const rowsAfter = (state: DurableObjectState, after: number) =>
  state.storage.sql
    .exec<{ seq: number; type: string; run_key: string | null; data: string; created_at: string }>("SELECT * FROM events WHERE seq > ? ORDER BY seq", after)
    .toArray()
    .map((row) => ({ seq: row.seq, type: row.type, runKey: row.run_key, data: JSON.parse(row.data), createdAt: row.created_at }));

describe("the appends the event log keeps for the run's report (issue 12 §7, session 14)", () => {
  it("a run's report carries its events as appended, without reading their messages and run back", { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const queries = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const { seen, stop } = recordStatements(state);
      try {
        instance.parts.history.append({ id: "kept-1", threadId: "t", kind: "user", text: "hello" });
        const head = state.storage.sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM events").one().seq;
        // The report went out and the tenant acknowledged the append's event.
        await eventually(async () => instance.parts.forwarder.idle && instance.parts.forwarder.forwardedThrough() >= head);
        return seen;
      } finally {
        stop();
      }
    });
    // This instance appended every event after the cursor, so the report read none back (session 15), and the
    // references' reads (events/event-refs.ts: messages / runs by a json_each id list) did not run either.
    expect(queries.filter((query) => /from "events" where "events"."seq" >/i.test(query))).toEqual([]);
    expect(queries.filter((query) => query.includes("json_each"))).toEqual([]);
  });

  it("a text SQLite stores differently (a lone surrogate) is not kept: its event is hydrated from the stored row", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const { kept, hydrated } = await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const head = state.storage.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events").one().seq ?? 0;
      instance.parts.history.append({ id: "broken-1", threadId: "t", kind: "user", text: "broken \ud800 pair" });
      const rows = rowsAfter(state, head);
      return { kept: rows.map((row) => instance.parts.events.recent.of(row)), hydrated: instance.parts.events.hydrate(rows) };
    });
    expect(kept).toEqual([undefined]);
    // As stored (a lone surrogate reads back as U+FFFD), not as appended.
    expect(hydrated[0].data.message.text).not.toContain("\ud800");
    expect(hydrated[0].data.message.text).toContain("\ufffd");
  });

  it("a kept append answers only for the row it wrote (same seq, type, run and time)", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const answers = await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const head = state.storage.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events").one().seq ?? 0;
      instance.parts.history.append({ id: "same-1", threadId: "t", kind: "user", text: "same" });
      const [row] = rowsAfter(state, head);
      const recent = instance.parts.events.recent;
      const answers = [row, { ...row, createdAt: "2000-01-01T00:00:00.000Z" }, { ...row, type: "state.changed" }, { ...row, runKey: "other" }].map((r) => recent.of(r) !== undefined);
      recent.dropThrough(row!.seq);
      return [...answers, recent.of(row) !== undefined];
    });
    expect(answers).toEqual([true, false, false, false, false]);
  });

  it("the unsent events come from the appends only when this instance holds every one: not past an earlier instance's, an unkept one or a rollback", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const answers = await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const head = state.storage.sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events").one().seq ?? 0;
      const seqs = (events: { seq: number }[] | null) => events?.map((event) => event.seq) ?? null;
      // A fresh instance on the same storage (the next activation): the create's events are an earlier instance's.
      const { events, history, db } = freshInstance(instance, state).parts;
      history.append({ id: "held-1", threadId: "t", kind: "user", text: "one" });
      history.append({ id: "held-2", threadId: "t", kind: "user", text: "two" });
      const held = seqs(events.recent.after(head));
      // Before the head: events an earlier instance (here: the create) stored are not all held.
      const before = seqs(events.recent.after(head - 1));
      // A transaction that appended and rolled back leaves nothing trusted (its seq goes to the next append).
      try {
        db.transaction(() => {
          events.append("state.changed", null, { state: {} });
          throw new Error("rolled back");
        });
      } catch {
        // expected
      }
      const afterRollback = seqs(events.recent.after(head));
      history.append({ id: "held-3", threadId: "t", kind: "user", text: "three" });
      const afterNext = seqs(events.recent.after(head + 2));
      // An append not kept (a lone surrogate) leaves a gap.
      history.append({ id: "held-4", threadId: "t", kind: "user", text: "broken \ud800" });
      const pastUnkept = seqs(events.recent.after(head + 2));
      return { head, held, before, afterRollback, afterNext, pastUnkept };
    });
    const { head } = answers;
    expect(head).toBeGreaterThan(0);
    expect(answers).toEqual({ head, held: [head + 1, head + 2], before: null, afterRollback: null, afterNext: [head + 3], pastUnkept: null });
  });
});
