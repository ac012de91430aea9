import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually } from "./helpers";

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
