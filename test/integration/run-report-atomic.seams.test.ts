import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";
import type { RunReport } from "../../src/schema/contracts";
import { api, createAgent, createTenant, eventually } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));

function report(agent: { id: string }, firstSeq: number): RunReport {
  const at = new Date().toISOString();
  const types = ["message.appended", "run.started", "message.appended", "run.completed"];
  return {
    events: types.map((type, i) => ({ seq: firstSeq + i, type, runKey: "rk_atomic", data: { i }, createdAt: at })),
    agent: { id: agent.id, kind: "assistant", lifecycle: "active" } as RunReport["agent"],
    activities: [{ stateRevision: 3, messageIds: ["m_atomic"], seq: 1 }],
    outcomes: [{ status: "completed", reason: "manual", toolCalls: 0, inputTokens: 10, outputTokens: 5, costMicros: 1, seq: 2 }],
    calls: [],
  };
}

/** What a report leaves at the tenant for `agentId`: its events, numbering row, notification batches, deliveries, metrics. */
async function applied(tenantId: string, agentId: string) {
  const state = await runInDurableObject(tenantDo(tenantId), (_instance: TenantDO, state) => {
    const one = (query: string, ...args: unknown[]) => state.storage.sql.exec<{ n: number }>(query, ...args).one().n;
    return {
      events: one("SELECT count(*) AS n FROM tenant_events, json_each(tenant_events.items) WHERE agent_id = ?", agentId),
      numbering: one("SELECT count(*) AS n FROM counters WHERE key = ?", `run-report:${agentId}`),
      batches: one("SELECT count(*) AS n FROM notification_batches WHERE source = ?", `agent:${agentId}`),
      deliveries: one("SELECT count(*) AS n FROM webhook_deliveries WHERE agent_id = ?", agentId),
    };
  });
  const metrics = String((await runInDurableObject(tenantDo(tenantId), (instance: TenantDO) => instance.metricsText([]))) ?? "");
  // Only this test's report counts a manual wake (the follower's run is a subscription wake).
  return { ...state, manualWakes: Number(/^vigil_wakes_total\{reason="manual"\} (\d+)$/m.exec(metrics)?.[1] ?? 0) };
}

describe("a run report is applied at the tenant in one transaction", () => {
  for (const point of ["tenant.report.afterEvents", "tenant.report.afterActivity"]) {
    it(`a throw at ${point} leaves nothing of the report applied, and the agent's retry is applied in full, once`, async () => {
      const { tenantId, key } = await createTenant();
      const speaker = await createAgent(key, { displayName: "Speaker" });
      const listener = await createAgent(key, { displayName: "Listener" });
      // A follower (its subscription makes the activity a notification batch) and a webhook (the events' deliveries).
      expect((await api("POST", `/v1/agents/${listener.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: speaker.id }] } })).status).toBe(201);
      expect((await api("POST", "/v1/webhooks", { key, body: { url: "https://hooks.example.com/vigil", eventTypes: ["run.completed"] } })).status).toBe(201);
      const before = await applied(tenantId, speaker.id);

      expect(await tenantDo(tenantId).armFault(point)).toBe(true);
      const thrown = await runInDurableObject(tenantDo(tenantId), (instance: TenantDO) =>
        instance.reportRun(speaker.id, report(speaker, 1_001)).then(
          () => "applied",
          (error: Error) => error.message,
        ),
      );
      expect(thrown).toBe(`injected crash at ${point}`);
      expect(await applied(tenantId, speaker.id)).toEqual(before);

      // The agent re-sends the same report (its cursor and parts stay until an answer): every part lands.
      const retried = await runInDurableObject(tenantDo(tenantId), (instance: TenantDO) => instance.reportRun(speaker.id, report(speaker, 1_001)));
      expect(retried).toMatchObject({ ok: true, recorded: 4 });
      const after = await applied(tenantId, speaker.id);
      expect(JSON.stringify(after)).toEqual(JSON.stringify({ events: before.events + 4, numbering: 1, batches: before.batches + 1, deliveries: before.deliveries + 1, manualWakes: before.manualWakes + 1 }));
      // The activity's batch woke the follower.
      await eventually(async () => {
        const runs = (await api("GET", `/v1/agents/${listener.id}/runs`, { key })).body.data as any[];
        return runs.some((run) => run.reason === "subscription");
      });

      // A third send of the same report adds nothing.
      const again = await runInDurableObject(tenantDo(tenantId), (instance: TenantDO) => instance.reportRun(speaker.id, report(speaker, 1_001)));
      expect(again).toMatchObject({ ok: true, recorded: 0 });
      expect(await applied(tenantId, speaker.id)).toEqual(after);
    });
  }
});
