import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/agent-schema";
import { endingTrace, storedRunTime, toRun, toState } from "../../src/objects/agent/rows";
import { agentDo, createAgent, createTenant, inDo } from "./helpers";

const ROLLBACK = new Error("rolled back on purpose");

/** Runs `fn` in a transaction that is then rolled back: what the per-call statement stored, without keeping it. */
function rolledBack<T>(state: DurableObjectState, fn: () => T): T {
  let out: T | undefined;
  try {
    state.storage.transactionSync(() => {
      out = fn();
      throw ROLLBACK;
    });
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
  return out!;
}

/**
 * Issue 12 §8 (session 11): the turn's writes — the inbox's enqueue, run start and run end, a trace row, the agent
 * state's wake record — are built once with placeholders instead of by drizzle on every call. Each is checked against
 * the per-call drizzle statement it replaced (kept here as the oracle, run in a rolled-back transaction on the same
 * rows): the stored bytes (json columns as stored text, NULLs, numbers) and the returned, decoded rows must be equal.
 */
describe("the turn's writes built once store and return what the per-call statements did", () => {
  it("enqueue, markRunning, trace rows, finish (with and without a trace) and recordWake", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const { db, inbox, runTrace, profile } = instance.parts;
      const raw = (table: string, runKey: string, omit: string[]) =>
        state.storage.sql
          .exec(`SELECT * FROM ${table} WHERE run_key = ? ORDER BY ${table === "runs" ? "run_key" : "seq"}`, runKey)
          .toArray()
          .map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !omit.includes(column))));
      // Times the new statements take from the clock are left out; everything else is compared as stored.
      const snap = (runKey: string) => ({ runs: raw("runs", runKey, ["enqueued_at", "ended_at"]), wakes: raw("wake_inbox", runKey, ["enqueued_at"]), trace: raw("run_trace", runKey, ["created_at"]) });

      // enqueue: the run row and its wake (a json input with nesting and a null).
      const job = { runKey: "built-1", reason: "message", threadId: "t-built", authority: "user", input: { text: "hi", nested: { list: [1, null, "x"] }, flag: true } };
      const expectedEnqueue = rolledBack(state, () => {
        const now = new Date().toISOString();
        const inserted = db.insert(schema.runs).values({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, status: "queued", attempt: 0, enqueuedAt: now, trace: {} }).onConflictDoNothing().returning({ runKey: schema.runs.runKey }).get();
        db.insert(schema.wakeInbox).values({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, authority: job.authority, input: job.input, enqueuedAt: now }).run();
        return { inserted, rows: snap(job.runKey) };
      });
      expect(expectedEnqueue.inserted).toEqual({ runKey: job.runKey });
      expect(inbox.enqueue(job)).toEqual({ status: "accepted", runKey: job.runKey, runStatus: "queued" });
      expect(snap(job.runKey)).toEqual(expectedEnqueue.rows);
      expect(snap(job.runKey).wakes[0]?.input).toBe(JSON.stringify(job.input));
      expect(inbox.enqueue(job)).toEqual({ status: "duplicate", runKey: job.runKey, runStatus: "queued" });
      expect(snap(job.runKey)).toEqual(expectedEnqueue.rows);

      // markRunning: the returned run and the stored row.
      const queued = inbox.getRun(job.runKey);
      const run = { ...queued, startedAt: new Date(Date.parse(queued.enqueuedAt) + 5).toISOString() };
      const expectedRunning = rolledBack(state, () => {
        const row = db
          .update(schema.runs)
          .set({ status: "running", attempt: run.attempt + 1, startedAt: storedRunTime(run.startedAt, run.enqueuedAt) })
          .where(eq(schema.runs.runKey, run.runKey))
          .returning()
          .get();
        return { run: toRun(row!), rows: snap(job.runKey) };
      });
      expect(inbox.markRunning(run)).toEqual(expectedRunning.run);
      expect(snap(job.runKey)).toEqual(expectedRunning.rows);

      // Trace rows: seq numbered per run inside the insert.
      for (const entry of [{ provider: "builtin", model: "echo", ok: true }, { provider: "builtin", model: "echo", ok: false, error: null }]) {
        const expectedTrace = rolledBack(state, () => {
          const seq = sql<number>`(SELECT coalesce(max(${schema.runTrace.seq}), 0) + 1 FROM ${schema.runTrace} WHERE ${schema.runTrace.runKey} = ${job.runKey})`;
          db.insert(schema.runTrace).values({ runKey: job.runKey, seq, kind: "attempt", data: { ...entry }, createdAt: new Date().toISOString() }).run();
          return snap(job.runKey);
        });
        runTrace.attempt(job.runKey, entry);
        expect(snap(job.runKey)).toEqual(expectedTrace);
      }
      expect(snap(job.runKey).trace.map((row) => row.seq)).toEqual([1, 2]);

      // finish with a trace to write: the per-call update with the same packed trace, then the two deletes.
      const written = { reason: "message", steps: 1 };
      const expectedFinish = rolledBack(state, () => {
        const row = db.select().from(schema.runs).where(eq(schema.runs.runKey, job.runKey)).get()!;
        const traceRows = db.select({ kind: schema.runTrace.kind, data: schema.runTrace.data, createdAt: schema.runTrace.createdAt }).from(schema.runTrace).where(eq(schema.runTrace.runKey, job.runKey)).all();
        const trace = endingTrace(row, written, traceRows);
        const ended = db
          .update(schema.runs)
          .set({ status: "completed", endedAt: storedRunTime(new Date().toISOString(), row.enqueuedAt), errorCode: null, ...(trace ? { trace } : {}) })
          .where(eq(schema.runs.runKey, job.runKey))
          .returning()
          .get()!;
        db.delete(schema.runTrace).where(eq(schema.runTrace.runKey, job.runKey)).run();
        db.delete(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, job.runKey)).run();
        return { run: { ...toRun(ended), endedAt: null }, rows: snap(job.runKey) };
      });
      expect(expectedFinish.rows.trace).toEqual([]);
      const finished = inbox.finishWithTrace(job.runKey, "completed", { trace: written });
      expect({ ...finished.run, endedAt: null }).toEqual(expectedFinish.run);
      expect(finished.traceRows.map((row: { seq?: number; kind: string }) => row.kind)).toEqual(["attempt", "attempt"]);
      expect(snap(job.runKey)).toEqual(expectedFinish.rows);

      // finish without a trace (the stored one stays) and with an error code.
      const bare = { ...job, runKey: "built-2" };
      inbox.enqueue(bare);
      const expectedBare = rolledBack(state, () => {
        const ended = db.update(schema.runs).set({ status: "failed_terminal", endedAt: new Date().toISOString(), errorCode: "model_failed" }).where(eq(schema.runs.runKey, bare.runKey)).returning().get()!;
        db.delete(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, bare.runKey)).run();
        return { run: { ...toRun(ended), endedAt: null }, rows: snap(bare.runKey) };
      });
      expect({ ...inbox.finish(bare.runKey, "failed_terminal", { errorCode: "model_failed" }), endedAt: null }).toEqual(expectedBare.run);
      expect(snap(bare.runKey)).toEqual(expectedBare.rows);
      expect(snap(bare.runKey).runs[0]).toMatchObject({ trace: "{}", error_code: "model_failed" });

      // recordWake: a head given or kept, a failure counted up or reset.
      const s = schema.agentState;
      const calls: [string, string | null, boolean][] = [
        ["2026-01-01T00:00:01.000Z", "m-1", false],
        ["2026-01-01T00:00:02.000Z", null, true],
        ["2026-01-01T00:00:03.000Z", null, true],
        ["2026-01-01T00:00:04.000Z", "m-2", false],
        ["2026-01-01T00:00:05.000Z", null, false],
      ];
      const stateRow = () => state.storage.sql.exec("SELECT * FROM agent_state").toArray();
      for (const [at, head, failed] of calls) {
        const expectedWake = rolledBack(state, () => {
          const row = db
            .update(s)
            .set({ revision: sql`${s.revision} + 1`, lastWakeAt: at, recentHeadMessageId: head ?? sql`${s.recentHeadMessageId}`, consecutiveFailureCount: failed ? sql`${s.consecutiveFailureCount} + 1` : 0 })
            .returning()
            .get();
          return { state: toState(row!), rows: stateRow() };
        });
        expect(profile.recordWake(at, head, failed)).toEqual(expectedWake.state);
        expect(stateRow()).toEqual(expectedWake.rows);
      }
      expect(profile.state()).toMatchObject({ lastWakeAt: "2026-01-01T00:00:05.000Z", recentHeadMessageId: "m-2", consecutiveFailureCount: 0 });
    });
  });
});
