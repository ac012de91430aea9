import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { TenantSnapshotCache } from "../../src/objects/agent/runs";
import type { AgentSnapshot } from "../../src/schema/contracts";
import { api, createAgent, createTenant, createTaskCommand, eventually, playbookAgentInCategory, taskTitlesIn, waitForRun } from "./helpers";

/**
 * What one unit of work costs the TenantDO, read from `vigil_do_calls_total` (counts, never
 * times). Reading the metrics is itself a `metricsText` call; it is left out of every delta.
 */
type Calls = Map<string, number>;

async function doCalls(key: string): Promise<Calls> {
  const res = await api("GET", "/v1/metrics", { key });
  expect(res.status).toBe(200);
  const calls: Calls = new Map();
  for (const match of String(res.body).matchAll(/^vigil_do_calls_total\{method="([^"]+)",object="(tenant|agent)"\} (\d+)$/gm)) {
    calls.set(`${match[2]}.${match[1]}`, Number(match[3]));
  }
  return calls;
}

/** Calls made between two readings, per `object.method`, without the readings themselves. */
function delta(before: Calls, after: Calls): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, count] of after) {
    const added = count - (before.get(name) ?? 0);
    if (added > 0 && name !== "tenant.metricsText") out[name] = added;
  }
  return out;
}

/**
 * TenantDO calls in a delta. `authenticate` is left out: the tests run with a 2 s credential cache (vitest.config.ts,
 * so that revocation tests see it lapse), where deployments cache for 30 s; auth-cache.test.ts counts it.
 */
const tenantCalls = (calls: Record<string, number>) => Object.entries(calls).filter(([name]) => name.startsWith("tenant.") && name !== "tenant.authenticate").reduce((sum, [, n]) => sum + n, 0);

const reports = async (key: string) => (await doCalls(key)).get("tenant.reportRun") ?? 0;

/** A new agent's creation events reach the tenant in a report of their own; later reports are runs'. */
async function created(key: string): Promise<void> {
  await eventually(async () => (await reports(key)) >= 1);
}

/** Sends one message, waits for its run, then for the run's report to reach the tenant (the report carries the counts). */
async function turn(key: string, agentId: string, text: string): Promise<any> {
  const reportsBefore = await reports(key);
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  const run = await waitForRun(key, agentId, sent.body.runKey);
  await eventually(async () => (await reports(key)) > reportsBefore);
  return run;
}

describe("TenantDO calls per unit of work (vigil_do_calls_total)", () => {
  it("exposes the counter by object and method, per tenant", async () => {
    const { key } = await createTenant();
    const other = await createTenant("other");
    const agent = await createAgent(key);
    await created(key);
    await turn(key, agent.id, "hello");
    const text = String((await api("GET", "/v1/metrics", { key })).body);
    expect(text).toContain("# TYPE vigil_do_calls_total counter");
    expect(text).toMatch(/^vigil_do_calls_total\{method="reportRun",object="tenant"\} \d+$/m);
    expect(text).toMatch(/^vigil_do_calls_total\{method="[A-Za-z]+",object="agent"\} \d+$/m);
    const others = String((await api("GET", "/v1/metrics", { key: other.key })).body);
    expect(others).not.toMatch(/vigil_do_calls_total\{method="(reportRun|submitTurn|createAgent)"/);
  });

  it("a chat turn in steady state (builtin model, no tools) costs one TenantDO call: its run report", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    await created(key);
    // The first turn fetches the tenant snapshot; steady state starts after it.
    await turn(key, agent.id, "warm up");
    const before = await doCalls(key);
    const turns = 3;
    for (let i = 0; i < turns; i++) {
      const run = await turn(key, agent.id, `turn ${i}`);
      expect(run.status).toBe("completed");
    }
    const calls = delta(before, await doCalls(key));
    expect(calls["tenant.reportRun"]).toBe(turns);
    expect(tenantCalls(calls)).toBeLessThanOrEqual(turns);
  });

  it("a tool call adds at most two TenantDO calls to its turn", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory(null);
    await created(key);
    await turn(key, agent.id, createTaskCommand(categoryId, "warm up"));
    const before = await doCalls(key);
    const run = await turn(key, agent.id, createTaskCommand(categoryId, "Leg day"));
    expect(run.status).toBe("completed");
    const calls = delta(before, await doCalls(key));
    expect(calls["tenant.reportRun"], JSON.stringify(calls)).toBe(1);
    expect(calls["tenant.executeTool"]).toBe(1);
    expect(tenantCalls(calls) - 1).toBeLessThanOrEqual(2);
    // Read after the counts: listing tasks is a TenantDO call of its own.
    expect(await taskTitlesIn(key, categoryId)).toContain("Leg day");
  });
});

describe("brake push", () => {
  it("an agent holding a cached snapshot is stopped at its next wake by a brake engaged after it, with no fetch", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    await created(key);
    const bystander = await createAgent(key, { kind: "planner", displayName: "Planner" });
    await eventually(async () => (await reports(key)) >= 2);
    // The agent now holds the tenant snapshot (it ran once).
    expect((await turn(key, agent.id, "before the brake")).status).toBe("completed");
    const before = await doCalls(key);

    const brake = await api("POST", "/v1/brakes", { key, body: { scope: "agent", target: agent.id, behaviour: "pause", reason: "incident" } });
    expect(brake.status).toBe(201);
    // Pushed before the brake was answered, to the braked agent only.
    const pushed = delta(before, await doCalls(key));
    expect(pushed["agent.applyTenantSnapshot"]).toBe(1);

    const refused = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after the brake" } });
    expect(refused.status).toBe(423);
    expect(refused.body.code).toBe("brake_engaged");
    const manual = await api("POST", `/v1/agents/${agent.id}/wake`, { key });
    expect(manual.status).toBe(423);
    // The agent decided from the pushed snapshot: it never asked the tenant.
    expect(delta(before, await doCalls(key))["tenant.agentSnapshot"]).toBeUndefined();
    expect((await api("POST", `/v1/agents/${bystander.id}/messages`, { key, body: { text: "unaffected" } })).status).toBe(202);

    // Released: pushed again, and the agent takes turns again.
    expect((await api("POST", `/v1/brakes/${brake.body.id}/release`, { key })).status).toBe(200);
    const again = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "released" } });
    expect(again.status).toBe(202);
    expect((await waitForRun(key, agent.id, again.body.runKey)).status).toBe("completed");
  });
});

describe("fan-out", () => {
  it("a change waking agents that never ran costs each one TenantDO call, its run report: the snapshot came with its creation and the wake confirms it", async () => {
    const { key } = await createTenant();
    const category = await api("POST", "/v1/journal/categories", { key, body: { name: "Gym" } });
    const subscription = { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }], predicate: { eq: ["task.categoryId", category.body.id] } };
    const agents: Array<{ id: string }> = [];
    for (let i = 0; i < 3; i++) agents.push(await createAgent(key, { displayName: `Follower ${i}`, subscriptions: [subscription] }));
    await eventually(async () => (await reports(key)) >= agents.length);
    const before = await doCalls(key);

    const task = await api("POST", "/v1/journal/tasks", { key, body: { title: "Leg day", categoryId: category.body.id } });
    expect(task.status).toBe(201);
    const runs = await eventually(async () => {
      const found = await Promise.all(agents.map(async (agent) => (await api("GET", `/v1/agents/${agent.id}/runs?limit=10`, { key })).body.data.find((r: any) => r.reason === "subscription" && r.status === "completed")));
      return found.every(Boolean) ? found : null;
    });
    expect(runs).toHaveLength(agents.length);
    await eventually(async () => (await reports(key)) >= (before.get("tenant.reportRun") ?? 0) + agents.length);
    const calls = delta(before, await doCalls(key));
    expect(calls["tenant.agentSnapshot"]).toBeUndefined();
    expect(calls["tenant.reportRun"]).toBe(agents.length);
  });
});

describe("a wake's snapshot version", () => {
  it("confirms a held snapshot of that version or newer as of the dispatch, and makes an older one fetch first", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const stub = env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agent.id}`)) as DurableObjectStub<AgentDO>;
    const outcome = await runInDurableObject(stub, async (instance: AgentDO) => {
      let clock = 1_000_000;
      const loads: number[] = [];
      const snapshot = (version: number) => ({ ...(instance.parts.snapshot["held"] as { snapshot: AgentSnapshot }).snapshot, version });
      const cache = new TenantSnapshotCache({ db: instance.parts.db, maxAgeMs: 300_000, now: () => clock, load: async () => (loads.push(clock), snapshot(7)) });
      const who = { agentId: agent.id, kind: "coach" };
      cache.apply(snapshot(5));
      clock += 400_000; // older than maxAge: the next check would fetch …
      cache.confirm(5, clock - 1_000); // … but a wake queued a second ago named version 5
      const confirmed = (await cache.current(who)).version;
      cache.confirm(5, clock + 60_000); // a dispatch time ahead of this clock is not taken
      clock += 299_500;
      const aged = (await cache.current(who)).version; // 300.5 s after the confirmation: fetched
      cache.confirm(9, clock); // the tenant is at 9, this agent holds 7: fetched before the next run
      const behind = (await cache.current(who)).version;
      return { confirmed, aged, behind, loads: loads.length };
    });
    expect(outcome).toEqual({ confirmed: 5, aged: 7, behind: 7, loads: 2 });
  });
});
