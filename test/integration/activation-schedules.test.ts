import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
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
      const Reactivated = instance.constructor as new (state: DurableObjectState, env: Cloudflare.Env) => unknown;
      const reactivated = new Reactivated(state, env) as { parts: any };
      // Its hooks are done, the timer catch-up's re-arm has finished, and a macrotask has passed (before session 11 the
      // retention arm listed the schedules there).
      await eventually(async () => reactivated.parts.scheduler.activating === false);
      await reactivated.parts.timers.deps.alarm.pending;
      await new Promise((resolve) => setTimeout(resolve, 0));
      await eventually(async () => until(state.storage));
      return listings;
    } finally {
      sql.exec = exec;
    }
  });
}

describe("the activation's schedule listing (issue 12 §7, session 11)", () => {
  it("the timer catch-up and the retention arm share one listing, and each still repairs its own schedule", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, {});
    const created = await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 3600 } } });
    expect(created.status).toBe(201);
    const stub = agentDo(tenantId, agent.id);
    // Both rows gone (as if a crash lost them): the activation must schedule each again.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM cf_agents_jobs WHERE fn IN ('onTimerAlarm', 'onRetentionDue')");
    });
    const repaired = (storage: DurableObjectStorage) => {
      const fns = rowsOf(storage).map((row) => row.fn);
      return fns.filter((fn) => fn === "onTimerAlarm").length === 1 && fns.filter((fn) => fn === "onRetentionDue").length === 1;
    };
    await reactivate(stub, repaired);
    const before = await runInDurableObject(stub, (_instance, state) => rowsOf(state.storage));
    // Both rows present: one listing answers both hooks, and neither schedules anything.
    const listings = await reactivate(stub, repaired);
    expect(listings).toBe(1);
    expect(await runInDurableObject(stub, (_instance, state) => rowsOf(state.storage))).toEqual(before);
  });
});

describe("the activation's recovery questions in one read (session 11)", () => {
  it("answer exactly what the inbox's pending count, the in-flight actions and the parked runs answer, in every state", async () => {
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
      ];
      const seen = new Set<string>();
      for (const [name, arrange] of states) {
        arrange();
        const expected = { pending: parts.inbox.pendingCount() > 0, sagas: parts.actions.inFlight().length > 0 || parts.inbox.parkedRunKeys().length > 0 };
        expect({ name, ...parts.activation.work(true) }).toEqual({ name, ...expected });
        seen.add(JSON.stringify(expected));
      }
      // Every combination was met.
      expect(seen.size).toBe(4);
      // Kept between the two hooks only: the first ask keeps the answer, the last drops it.
      exec("DELETE FROM wake_inbox");
      expect(parts.activation.work(false)).toEqual({ pending: false, sagas: true });
      exec("INSERT INTO wake_inbox (run_key, reason, thread_id, authority, input, enqueued_at) VALUES ('rk-y', 'manual', 't', 'system', '{}', ?)", now);
      expect(parts.activation.work(true)).toEqual({ pending: false, sagas: true });
      expect(parts.activation.work(true)).toEqual({ pending: true, sagas: true });
    });
  });
});
