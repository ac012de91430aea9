import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { agentDo, createAgent, createTenant, eventually, inDo, subscriptionWake, freshInstance } from "./helpers";

/** The runtime's and the Agents SDK's own tables: what is left is ours. */
const NOT_OURS = /\b(cf_agents?_\w+|__miniflare_do_name|_cf_\w+)\b/;

/**
 * On a freshly opened database every DISTINCT statement is prepared once (plus the schema parse on the first), so a
 * cold wake's cost follows how many different statements it runs, not only how many. This counts ours on a cold wake
 * of an agent with nothing to recover — a fresh instance on the same storage (the next activation after an eviction),
 * woken the way the wake consumer does (`deliverWake`), through the run and its report. Every read goes to SQLite
 * (the inbox, the hot page and the planner keep no copy); the bound is the measured count. Counted, not timed.
 */
const MAX_DISTINCT_OWN_STATEMENTS = 34;

describe("statements of a cold wake", () => {
  it(`a cold subscription wake runs at most ${MAX_DISTINCT_OWN_STATEMENTS} distinct statements of ours, the Agents SDK started first, and schedules nothing`, { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    const runKey = runKeys.subscription(agent.id, "sub_cold", "lck-cold");
    // The create scheduled the retention pass, so the wake's path does not.
    const scheduled = (state: DurableObjectState) => state.storage.sql.exec<{ fn: string }>("SELECT fn FROM cf_agents_jobs ORDER BY fn").toArray().map((row) => row.fn);
    await eventually(() => inDo(agentDo(tenantId, agent.id), (_instance, state) => scheduled(state).includes("onRetentionDue")));

    const { status, distinct, jobsInserted, jobs, sdkStarted } = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const sql = state.storage.sql as unknown as { exec: (query: string, ...bindings: unknown[]) => unknown };
      const exec = sql.exec;
      const seen = new Map<string, number>();
      const jobsInserted: unknown[] = [];
      let counting = true;
      sql.exec = (query, ...bindings) => {
        if (counting) seen.set(query, (seen.get(query) ?? 0) + 1);
        if (counting && query.startsWith("INSERT INTO cf_agents_jobs")) jobsInserted.push(bindings[2]);
        return exec.call(state.storage.sql, query, ...bindings);
      };
      const uncounted = <T>(read: () => T): T => {
        counting = false;
        try {
          return read();
        } finally {
          counting = true;
        }
      };
      try {
        const cold = freshInstance(instance, state);
        // An RPC waits for the start's blockConcurrencyWhile (migration check, activation hooks); a direct call would not.
        await state.blockConcurrencyWhile(async () => undefined);
        const outcome = await cold.deliverWake(subscriptionWake(tenantId, agent.id, runKey, "a change matched"));
        expect(outcome).toMatchObject({ ok: true, status: "accepted" });
        // The delivery answers once the run ended and its report went to the tenant.
        expect(uncounted(() => !cold.parts.loop.busy && cold.parts.forwarder.idle)).toBe(true);
        return {
          status: uncounted(() => cold.parts.inbox.getRun(runKey)?.status),
          distinct: [...seen.keys()],
          jobsInserted,
          jobs: uncounted(() => scheduled(state)),
          sdkStarted: cold.lifecycle.isStarted() as boolean,
        };
      } finally {
        sql.exec = exec;
      }
    });
    expect(status).toBe("completed");
    // A wake entry starts the Agents SDK itself, whether or not it is declared `async` (agent-do.ts `sdkStarted`): its
    // recovery reads (MCP servers, durable tasks, workflows, run fibers) run once, before the wake.
    expect(sdkStarted).toBe(true);
    const sdk = distinct.filter((query: string) => NOT_OURS.test(query));
    expect(sdk.length).toBeGreaterThan(0);
    // The wake scheduled nothing (its run and report were over by the answer: no watchdog); the
    // retention pass is still there, once.
    expect(jobsInserted).toEqual([]);
    expect(jobs.filter((fn: string) => fn === "onRetentionDue")).toEqual(["onRetentionDue"]);
    const ours = distinct.filter((query) => !NOT_OURS.test(query));
    const flat = ours.map((query) => query.replace(/\s+/g, " "));
    // Answered by the activation's one read (no timer candidate, no open compaction job), the profile's row (the
    // tenant id) and the counters' shared read (the tenant snapshot): none of these is prepared on this path.
    expect(flat.filter((query) => /from "timers"/i.test(query) && !query.includes(" AS pending,"))).toEqual([]);
    expect(flat.filter((query) => /FROM "compaction_jobs" WHERE "status" = 'running'/.test(query))).toEqual([]);
    expect(flat.filter((query) => /^select "tenant_id" from "agent_meta"/i.test(query))).toEqual([]);
    expect(flat.filter((query) => /^select "key", "state" from "counters"/i.test(query) && !/ in \(\?, \?\)$/i.test(query))).toEqual([]);
    expect(flat.filter((query) => query.includes("__drizzle_migrations"))).toEqual([]);
    expect(ours.length, flat.join("\n")).toBeLessThanOrEqual(MAX_DISTINCT_OWN_STATEMENTS);
  });
});
