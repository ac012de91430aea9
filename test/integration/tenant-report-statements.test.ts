import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import type { RunReport } from "../../src/schema/contracts";
import { ADMIN, api, createAgent, createTenant, freshInstance } from "./helpers";

/**
 * The tenant side of a chat turn is one reportRun; its SQL statements are counted, not timed: the agent's numbering
 * read, the events insert, the subscriber probe, the metrics upsert and the numbering upsert.
 */
const BOUND = 5;

function chatTurnReport(agent: { id: string }, part: number, firstSeq: number): RunReport {
  const at = new Date().toISOString();
  const types = ["message.appended", "run.started", "state.changed", "model.called", "message.appended", "state.changed", "run.completed", "usage.recorded"];
  return {
    events: types.map((type, i) => ({ seq: firstSeq + i, type, runKey: `rk_${part}`, data: { i }, createdAt: at })),
    agent: { id: agent.id, kind: "assistant", lifecycle: "active" } as RunReport["agent"],
    activities: [{ stateRevision: part, messageIds: [`m_${part}_a`, `m_${part}_b`], seq: 2 * part - 1 }],
    outcomes: [{ status: "completed", reason: "message", toolCalls: 1, inputTokens: 120, outputTokens: 40, costMicros: 3, seq: 2 * part }],
    calls: [{ object: "agent", method: "submitTurn", count: 1 }, { object: "tenant", method: "reportRun", count: 1 }],
  };
}

async function counted<T>(tenantId: string, call: (instance: TenantDO) => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
  return runInDurableObject(stub, async (instance: TenantDO, state) => {
    const sql = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => unknown };
    const original = sql.exec;
    const statements: string[] = [];
    sql.exec = (query: string, ...args: unknown[]) => {
      // A report's numbering row is named by its binding (the shared counters read serves the snapshot version too).
      statements.push(typeof args[0] === "string" && args[0].startsWith("run-report:") ? `${query} -- ${args[0]}` : query);
      return original.call(state.storage.sql, query, ...args);
    };
    try {
      return { result: await call(instance), statements };
    } finally {
      sql.exec = original;
    }
  });
}

const metric = (text: string, line: string) => Number(text.match(new RegExp(`^${line.replace(/[{}"]/g, "\\$&")} (\\d+)$`, "m"))?.[1] ?? 0);

describe("reportRun statement count (issue 12 §8)", () => {
  it(`records a chat turn's report in at most ${BOUND} SQL statements, exactly once`, async () => {
    const { tenantId, key } = await createTenant("report-statements");
    const agent = await createAgent(key);
    // A first report warms whatever the object reads once (prepared statements, the tenant row).
    await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 1, 10_001)));
    const { result, statements } = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 2, 20_001)));
    expect(result).toMatchObject({ ok: true, recorded: 8 });
    expect(statements.length, statements.join("\n")).toBeLessThanOrEqual(BOUND);
    // One statement each for the event rows and for the counters, whatever their number.
    expect(statements.filter((q) => /insert into "?tenant_events/i.test(q))).toHaveLength(1);
    expect(statements.filter((q) => /insert into "?metrics/i.test(q))).toHaveLength(1);

    // A re-sent report adds nothing: events by (agent, agent seq), parts by number.
    const again = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 2, 20_001)));
    expect(again.result).toMatchObject({ ok: true, recorded: 0 });
    const text = (await counted(tenantId, async (tenant) => tenant.metricsText([]))).result;
    expect(metric(text, 'vigil_runs_total{outcome="completed"}')).toBe(2);
    expect(metric(text, 'vigil_tokens_total{direction="input"}')).toBe(240);
    expect(metric(text, "vigil_cost_micro_usd_total")).toBe(6);
    expect(metric(text, 'vigil_do_calls_total{method="submitTurn",object="agent"}')).toBeGreaterThanOrEqual(3);
  });

  it("a report answers the snapshot version a publish just wrote, without reading it; the tenant's erasure drops the kept copy", async () => {
    const { tenantId, key } = await createTenant("report-snapshot-version");
    const agent = await createAgent(key);
    const first = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 1, 10_001)));
    const before = (first.result as { snapshotVersion: number }).snapshotVersion;
    // A brake publishes a new version (pushed to the agents before the answer).
    const brake = await api("POST", "/v1/brakes", { key, body: { scope: "all", behaviour: "pause", reason: "version check" } });
    expect(brake.status, JSON.stringify(brake.body)).toBe(201);
    const second = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 2, 20_001)));
    expect(second.result).toMatchObject({ ok: true, snapshotVersion: before + 1 });
    // The one read of `counters` is the agent's report numbering: the version is not read.
    expect(second.statements.filter((q) => /^select .*from "?counters/i.test(q)), second.statements.join("\n")).toHaveLength(1);

    // Every row gone: the version starts again from the (empty) database, not from the kept copy.
    expect((await api("DELETE", `/v1/tenants/${tenantId}`, { key: ADMIN })).status).toBe(200);
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
    await runInDurableObject(stub, (instance: TenantDO) => expect(instance.parts.snapshots.version()).toBe(1));
  });

  it("an agent's report numbering goes with its erasure: the same id reporting from its first part again is recorded", async () => {
    const { tenantId, key } = await createTenant("report-numbering-erasure");
    const agent = await createAgent(key);
    const first = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 1, 10_001)));
    expect(first.result).toMatchObject({ ok: true, recorded: 8 });
    await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 2, 20_001)));
    // The tenant forgets the erased agent (its rows, the numbering row among them).
    await counted(tenantId, async (tenant) => tenant.parts.erasure.agentErased({ agentId: agent.id, reason: "test", rows: {} }));
    // An agent by that id starts over: its first events and parts are new to the tenant, not a re-send.
    const again = await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 1, 1)));
    expect(again.result).toMatchObject({ ok: true, recorded: 8 });
  });

  it("a webhook endpoint created or deleted between reports is matched at once (the endpoint cache and the skipped scan are exact)", async () => {
    const { tenantId, key } = await createTenant("report-webhook-cache");
    const agent = await createAgent(key);
    const deliveries = () => readDeliveries(tenantId);
    // Warm: no endpoint, so the report finds none and the unqueued scan drains.
    await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 1, 10_001)));
    expect(await deliveries()).toEqual({ total: 0, unqueued: 0 });

    const created = await api("POST", "/v1/webhooks", { key, body: { url: "https://hooks.example.com/vigil", eventTypes: ["run.completed"] } });
    expect(created.status).toBe(201);
    await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 2, 20_001)));
    // One run.completed event matched, and its queue message sent (queued_at set) by the same report.
    expect(await deliveries()).toEqual({ total: 1, unqueued: 0 });

    expect((await api("DELETE", `/v1/webhooks/${created.body.id}`, { key })).status).toBe(200);
    await counted(tenantId, (tenant) => tenant.reportRun(agent.id, chatTurnReport(agent, 3, 30_001)));
    expect(await deliveries()).toEqual({ total: 1, unqueued: 0 });
  });
});

/** A fresh TenantDO on the object's storage: the next activation after an eviction, with nothing kept in memory. */
async function restarted<T>(tenantId: string, call: (instance: TenantDO) => Promise<T>): Promise<{ result: T; statements: string[] }> {
  return counted(tenantId, async (instance) => {
    const state = (instance as unknown as { ctx: DurableObjectState }).ctx;
    return call(freshInstance(instance, state));
  });
}

const runsCompleted = async (tenantId: string) => metric((await counted(tenantId, async (tenant) => tenant.metricsText([]))).result, 'vigil_runs_total{outcome="completed"}');

describe("report numbering after the object's start", () => {
  it("a restarted object skips a re-sent part and records the new one, for a known agent and a new one alike", async () => {
    const { tenantId, key } = await createTenant("report-numbering-restart");
    const known = await createAgent(key);
    const fresh = await createAgent(key);
    await counted(tenantId, (tenant) => tenant.reportRun(known.id, chatTurnReport(known, 1, 10_001)));
    expect(await runsCompleted(tenantId)).toBe(1);

    const { result } = await restarted(tenantId, async (tenant) => {
      // The agent re-sends its part 1 (its answer was lost) with part 2: only part 2 is new.
      const resent = { ...chatTurnReport(known, 2, 20_001), outcomes: [...chatTurnReport(known, 1, 10_001).outcomes, ...chatTurnReport(known, 2, 20_001).outcomes] };
      const first = await tenant.reportRun(known.id, resent);
      const second = await tenant.reportRun(fresh.id, chatTurnReport(fresh, 1, 30_001));
      return { first, second };
    });
    expect(result.first).toMatchObject({ ok: true, recorded: 8 });
    expect(result.second).toMatchObject({ ok: true, recorded: 8 });
    expect(await runsCompleted(tenantId)).toBe(3);
  });
});

describe("the report's dispatch skip is exact (session 9)", () => {
  it("a batch whose writer never reached its dispatch is dispatched by the next report, though that report records none", async () => {
    const { tenantId, key } = await createTenant("report-left-pending");
    const watched = await createAgent(key, { displayName: "Watched" });
    const listener = await createAgent(key, { displayName: "Listener" });
    const reporter = await createAgent(key, { displayName: "Reporter" });
    expect((await api("POST", `/v1/agents/${listener.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: watched.id }] } })).status).toBe(201);
    // The reporter has no follower: its reports record no batch. After this one nothing is pending.
    await counted(tenantId, (tenant) => tenant.reportRun(reporter.id, chatTurnReport(reporter, 1, 10_001)));
    expect(await undispatched(tenantId)).toEqual([]);

    // A writer that committed its batch and then threw before its dispatch (e.g. `changed` when cancelling a
    // destroyed agent's open work fails): the batch is pending and no pass runs for it here.
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
    await runInDurableObject(stub, (instance: TenantDO) => {
      const parts = (instance as unknown as { parts: { agentActivity: { recordRun(agent: unknown, activity: unknown): boolean } } }).parts;
      expect(parts.agentActivity.recordRun({ id: watched.id, kind: "coach", lifecycle: "active" }, { stateRevision: 7, messageIds: [], cascadeDepth: 1 })).toBe(true);
    });
    expect(await undispatched(tenantId)).toHaveLength(1);

    // The next report records nothing itself, and still runs the pass: the batch is dispatched, waking the listener.
    const second = await counted(tenantId, (tenant) => tenant.reportRun(reporter.id, chatTurnReport(reporter, 2, 20_001)));
    expect(second.result).toMatchObject({ ok: true });
    expect(await undispatched(tenantId)).toEqual([]);
    expect(await matchedCount(tenantId, `agent:${watched.id}`)).toBe(1);

    // A report that records no batch runs no pass.
    const third = await counted(tenantId, (tenant) => tenant.reportRun(reporter.id, chatTurnReport(reporter, 3, 30_001)));
    expect(third.statements.filter((q) => /notification_batches/i.test(q)), third.statements.join("\n")).toHaveLength(0);
  });
});

async function undispatched(tenantId: string): Promise<string[]> {
  const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
  return runInDurableObject(stub, (_instance: TenantDO, state) =>
    state.storage.sql.exec<{ source: string }>("SELECT source FROM notification_batches WHERE dispatched_at IS NULL").toArray().map((row) => row.source),
  );
}

async function matchedCount(tenantId: string, source: string): Promise<number | null> {
  const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
  return runInDurableObject(stub, (_instance: TenantDO, state) =>
    state.storage.sql.exec<{ matched: number | null }>("SELECT max(matched_count) AS matched FROM notification_batches WHERE source = ? AND dispatched_at IS NOT NULL", source).one().matched,
  );
}

async function readDeliveries(tenantId: string): Promise<{ total: number; unqueued: number }> {
  const stub = env.TENANT.get(env.TENANT.idFromName(tenantId));
  return runInDurableObject(stub, (_instance: TenantDO, state) =>
    state.storage.sql.exec<{ total: number; unqueued: number }>("SELECT count(*) AS total, count(*) - count(queued_at) AS unqueued FROM webhook_deliveries").one(),
  );
}
