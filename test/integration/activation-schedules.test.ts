import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentDo, api, createAgent, createTenant, eventually, waitForRun, freshInstance } from "./helpers";

/** The Agents SDK's listing of an object's schedules (every `listSchedules`); its idempotent insert reads by callback instead. */
const LISTING = /FROM cf_agents_jobs WHERE capability = \?/;

type Row = { fn: string; time: number };
const rowsOf = (storage: DurableObjectStorage) => storage.sql.exec<Row>("SELECT fn, time FROM cf_agents_jobs ORDER BY fn").toArray();

/**
 * A fresh instance on the same storage (the next activation after an eviction), with the SDK's schedule listings on its
 * storage counted until `until` holds.
 */
async function reactivate(stub: ReturnType<typeof agentDo>, until: (storage: DurableObjectStorage) => boolean): Promise<number> {
  return runInDurableObject(stub, async (instance, state) => {
    const sql = state.storage.sql as unknown as { exec: (query: string, ...bindings: unknown[]) => unknown };
    const exec = sql.exec;
    let listings = 0;
    sql.exec = (query, ...bindings) => {
      if (LISTING.test(query)) listings++;
      return exec.call(state.storage.sql, query, ...bindings);
    };
    try {
      const reactivated = freshInstance(instance, state) as { parts: any };
      // Its hooks (inside the start's blockConcurrencyWhile) are done, the timer catch-up's re-arm has finished, and a
      // macrotask has passed.
      await state.blockConcurrencyWhile(async () => undefined);
      await reactivated.parts.timers.deps.alarm.pending;
      await new Promise((resolve) => setTimeout(resolve, 0));
      await eventually(async () => until(state.storage));
      return listings;
    } finally {
      sql.exec = exec;
    }
  });
}

describe("the activation's schedule repairs", () => {
  it("the timer catch-up and the retention arm each repair their own lost schedule, and schedule nothing when both are there", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, {});
    const created = await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 3600 } } });
    expect(created.status).toBe(201);
    // A later second timer: the re-arm's earliest must be the first one's.
    expect((await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 7200 } } })).status).toBe(201);
    const stub = agentDo(tenantId, agent.id);
    // Both rows gone (as if a crash lost them), the retention pass long overdue: the activation must schedule each again.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM cf_agents_jobs WHERE fn IN ('onTimerAlarm', 'onRetentionDue')");
      state.storage.sql.exec("UPDATE counters SET state = json_object('at', 0) WHERE key = 'retention:armed-for'");
    });
    const repaired = (storage: DurableObjectStorage) => {
      const fns = rowsOf(storage).map((row) => row.fn);
      return fns.filter((fn) => fn === "onTimerAlarm").length === 1 && fns.filter((fn) => fn === "onRetentionDue").length === 1;
    };
    await reactivate(stub, repaired);
    const before = await runInDurableObject(stub, (_instance, state) => rowsOf(state.storage));
    // The catch-up decided nothing, so it re-armed at its candidates' earliest: the same time as `min(next_run_at)` over active timers, rounded up to a whole second (the job row holds ms).
    const earliest = await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ at: number }>("SELECT min(next_run_at) AS at FROM timers WHERE status = 'active'").one().at);
    expect(before.find((row) => row.fn === "onTimerAlarm")?.time).toBe(Math.ceil(earliest / 1000) * 1000);
    // Both rows present: neither hook schedules anything.
    await reactivate(stub, repaired);
    expect(await runInDurableObject(stub, (_instance, state) => rowsOf(state.storage))).toEqual(before);
  });
});

describe("the retention arm on activation", () => {
  it("lists nothing while the pass it scheduled is not overdue by an interval, and repairs a lost schedule once it is", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, {});
    const stub = agentDo(tenantId, agent.id);
    const retentionRows = (storage: DurableObjectStorage) => rowsOf(storage).filter((row) => row.fn === "onRetentionDue").length;
    // Scheduled after the create (in the background), with its time kept: then an activation asks the SDK nothing.
    const armedFor = () => runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM counters WHERE key = 'retention:armed-for'").one().n);
    await eventually(async () => (await armedFor()) === 1);
    expect(await reactivate(stub, (storage) => retentionRows(storage) === 1)).toBe(0);
    // The row lost while its pass is not yet due: still trusted (found once the pass is an interval overdue).
    await runInDurableObject(stub, (_instance, state) => void state.storage.sql.exec("DELETE FROM cf_agents_jobs WHERE fn = 'onRetentionDue'"));
    expect(await reactivate(stub, (storage) => retentionRows(storage) === 0)).toBe(0);
    await runInDurableObject(stub, (_instance, state) => void state.storage.sql.exec("UPDATE counters SET state = json_object('at', ?) WHERE key = 'retention:armed-for'", Date.now() - 3_700_000));
    expect(await reactivate(stub, (storage) => retentionRows(storage) === 1)).toBe(1);
  });
});

describe("the activation's recovery questions in one read", () => {
  it("answer exactly what the inbox's pending count, the in-flight actions, the parked runs, the timers' candidates and the compaction recovery answer, in every state", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hello" } });
    expect(sent.status).toBe(202);
    await waitForRun(key, agent.id, sent.body.runKey);
    await runInDurableObject(agentDo(tenantId, agent.id), (instance: any, state: DurableObjectState): void => {
      const parts = instance.parts;
      const exec = (query: string, ...args: unknown[]) => state.storage.sql.exec(query, ...args);
      const now = new Date().toISOString();
      const states: Array<[string, () => void]> = [
        ["nothing to resume", () => undefined],
        ["a run parked on a saga", () => exec("UPDATE runs SET status = 'waiting'")],
        ["an action executing", () => exec("UPDATE runs SET status = 'completed'") && exec("INSERT INTO actions (operation_id, run_key, step, call_index, tool_call_id, tool_name, tool_version, args, action_stable_id, risk_level, preview_only, envelope, status, created_at, updated_at) VALUES ('op-1', ?, 0, 0, 'call-1', 'tool', '1', '{}', 'stable', 'low', 0, '{}', 'executing', ?, ?)", sent.body.runKey, now, now)],
        ["an action awaiting approval", () => exec("UPDATE actions SET status = 'awaiting_approval'")],
        ["an action finished", () => exec("UPDATE actions SET status = 'completed'")],
        ["a wake in the inbox", () => exec("INSERT INTO wake_inbox (run_key, reason, thread_id, authority, input, enqueued_at) VALUES ('rk-x', 'manual', 't', 'system', '{}', ?)", now)],
        ["both", () => exec("UPDATE runs SET status = 'waiting'")],
        // Timers (session 12): only an active timer with a nextRunAt is a catch-up candidate.
        ["an active timer", () => exec("INSERT INTO timers (id, name, spec, catchup_policy, catchup_window_seconds, next_run_at, status, created_at, updated_at) VALUES ('tm-1', NULL, ?, 'coalesce', 3600, ?, 'active', ?, ?)", JSON.stringify({ kind: "interval", everySeconds: 3600 }), Date.now() + 3_600_000, now, now)],
        ["an active timer without a next run", () => exec("UPDATE timers SET next_run_at = NULL")],
        ["a completed timer", () => exec("UPDATE timers SET next_run_at = ?, status = 'completed'", Date.now() + 3_600_000)],
        ["a deleted timer", () => exec("UPDATE timers SET status = 'deleted'")],
        // Compaction jobs (session 12): what the recovery reads is a running or a pending job.
        ["a pending compaction job", () => exec("INSERT INTO compaction_jobs (id, agent_id, thread_id, start_message_id, end_message_id, summary_depth, start_seq, end_seq, covered_from_seq, covered_through_seq, status, attempt_count, created_at, updated_at) VALUES ('cj-1', 'a', 't', 'm1', 'm2', 0, 1, 2, 1, 2, 'pending', 0, 1, 1)")],
        ["a running compaction job", () => exec("UPDATE compaction_jobs SET status = 'running'")],
        ["a done compaction job", () => exec("UPDATE compaction_jobs SET status = 'done'")],
        ["a failed compaction job", () => exec("UPDATE compaction_jobs SET status = 'failed_terminal'")],
      ];
      // The parts' own reads, as each hook would ask them (the recovery's writes rolled back; no timer here is due).
      const rollback = new Error("rollback");
      const recovers = (): boolean => {
        let open = false;
        try {
          state.storage.transactionSync(() => {
            open = parts.compaction.recover();
            throw rollback;
          });
        } catch (error) {
          if (error !== rollback) throw error;
        }
        return open;
      };
      const seen = new Set<string>();
      for (const [name, arrange] of states) {
        arrange();
        const expected = {
          pending: parts.inbox.pendingCount() > 0,
          sagas: parts.actions.inFlight().length > 0 || parts.inbox.parkedRunKeys().length > 0,
          timers: typeof parts.timers.plan(Date.now()).earliest === "number",
          compaction: recovers(),
        };
        expect({ name, ...parts.activation.work(true) }).toEqual({ name, ...expected });
        seen.add(JSON.stringify(expected));
      }
      // Every combination of the first two was met, and each of the last two both ways.
      expect(new Set([...seen].map((s) => JSON.stringify({ ...JSON.parse(s), timers: 0, compaction: 0 }))).size).toBe(4);
      expect([...seen].some((s) => JSON.parse(s).timers) && [...seen].some((s) => !JSON.parse(s).timers)).toBe(true);
      expect([...seen].some((s) => JSON.parse(s).compaction) && [...seen].some((s) => !JSON.parse(s).compaction)).toBe(true);
      // Kept across the hooks: the first ask keeps the answer, the last (the compaction recovery's) drops it.
      exec("DELETE FROM wake_inbox");
      const kept = parts.activation.work();
      expect(kept).toMatchObject({ pending: false, sagas: true });
      exec("INSERT INTO wake_inbox (run_key, reason, thread_id, authority, input, enqueued_at) VALUES ('rk-y', 'manual', 't', 'system', '{}', ?)", now);
      expect(parts.activation.work()).toEqual(kept);
      expect(parts.activation.work(true)).toEqual(kept);
      expect(parts.activation.work(true)).toMatchObject({ pending: true, sagas: true });
    });
  });
});
