import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { VigilClient } from "../../src/client";
import { config } from "../../src/config";
import { api, createAgent, createTenant, inDo, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string): any => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const tenantDo = (tenantId: string): any => env.TENANT.get(env.TENANT.idFromName(tenantId));
const OLD = "2020-01-01T00:00:00.000Z";

const sql = (stub: unknown, query: string, ...params: unknown[]) => inDo(stub, (_i, state) => state.storage.sql.exec(query, ...params).toArray() as any[]);
const count = async (stub: unknown, table: string) => Number((await sql(stub, `SELECT count(*) AS n FROM ${table}`))[0].n);

async function converse(key: string, agentId: string, text: string): Promise<void> {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status).toBe(202);
  await waitForRun(key, agentId, sent.body.runKey);
}

describe("retention", () => {
  it("prunes an agent's old events (not its messages or runs) and answers 410 cursor_expired below the pruned mark", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await converse(key, agent.id, "first");
    const [{ mark }] = await sql(agentDo(tenantId, agent.id), "SELECT max(last_seq) AS mark FROM events");
    const rowsThroughMark = await count(agentDo(tenantId, agent.id), "events");
    await converse(key, agent.id, "second");
    await sql(agentDo(tenantId, agent.id), "UPDATE events SET created_at = ? WHERE last_seq <= ?", OLD, mark);
    const messagesBefore = await count(agentDo(tenantId, agent.id), "messages");
    const runsBefore = await count(agentDo(tenantId, agent.id), "runs");

    const pruned = await agentDo(tenantId, agent.id).pruneNow(Date.now());
    expect(pruned).toMatchObject({ ok: true, deleted: { events: rowsThroughMark }, more: false });
    const [{ oldest }] = await sql(agentDo(tenantId, agent.id), "SELECT min(seq) AS oldest FROM events");
    expect(oldest).toBe(mark + 1);
    expect(await count(agentDo(tenantId, agent.id), "messages")).toBe(messagesBefore);
    expect(await count(agentDo(tenantId, agent.id), "runs")).toBe(runsBefore);

    const expired = await api("GET", `/v1/agents/${agent.id}/events`, { key, headers: { "last-event-id": "1" } });
    expect(expired.status).toBe(410);
    expect(expired.headers.get("content-type")).toContain("application/problem+json");
    expect(expired.body).toMatchObject({ code: "cursor_expired", oldestSeq: mark + 1 });

    // The typed client resumes from the oldest event still kept and says so.
    const client = new VigilClient({ baseUrl: "https://vigil.test", token: key, fetch: (input, init) => SELF.fetch(input as string, init) });
    const gaps: Array<{ lastEventId: string | undefined; oldestSeq: number }> = [];
    const stream = client.events(agent.id, { after: 1, reconnect: { initialDelayMs: 10, maxAttempts: 2 }, onCursorExpired: (gap) => gaps.push(gap) });
    const seen: number[] = [];
    for await (const event of stream) {
      seen.push(event.seq ?? -1);
      if (event.type === "run.completed") break;
    }
    stream.close();
    expect(gaps).toEqual([{ lastEventId: "1", oldestSeq: mark + 1 }]);
    expect(seen[0]).toBe(mark + 1);
  });

  it("bounds an agent's scheduler decisions (one per timer tick) by age and by row cap", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const timer = await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 3600 } } });
    expect(timer.status).toBe(201);
    const stub = agentDo(tenantId, agent.id);
    const { maxRows } = config.retention.schedulerDecisions;
    const fresh = new Date().toISOString();
    // 300 decisions older than the age bound, then the row cap plus 200 recent ones.
    await inDo(stub, (_i, state) => {
      for (let i = 0; i < 300 + maxRows + 200; i++) {
        state.storage.sql.exec("INSERT INTO scheduler_decisions (timer_id, action, run_key, decision, created_at) VALUES (?, 'fire', NULL, '{}', ?)", timer.body.id, i < 300 ? OLD : fresh);
      }
    });
    const total = await count(stub, "scheduler_decisions");
    let deleted = 0;
    for (let pass = 0; pass < 20; pass++) {
      const outcome = await stub.pruneNow(Date.now());
      deleted += outcome.deleted.schedulerDecisions;
      if (!outcome.more) break;
    }
    expect(deleted).toBe(total - maxRows);
    expect(await count(stub, "scheduler_decisions")).toBe(maxRows);
    expect(Number((await sql(stub, "SELECT count(*) AS n FROM scheduler_decisions WHERE created_at = ?", OLD))[0].n)).toBe(0);
    // The timer's view still shows its recent decisions.
    const listed = await api("GET", `/v1/agents/${agent.id}/timers`, { key });
    expect(listed.body.data[0].recentDecisions.length).toBeGreaterThan(0);
  });

  it("bounds the agent event log by the row cap a tenant sets in its policy, in bounded batches", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const policy = await api("PUT", "/v1/policy", { key, body: { retention: { agentEvents: { maxRows: 1_000 } } } });
    expect(policy.status).toBe(200);
    expect(policy.body.retention).toEqual({ agentEvents: { maxRows: 1_000 } });
    await sql(
      agentDo(tenantId, agent.id),
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1700)
       INSERT INTO events (seq, last_seq, run_key, items, created_at)
       SELECT (SELECT max(last_seq) FROM events) + i, (SELECT max(last_seq) FROM events) + i, NULL, json_array(json_array('state.changed', ?1, json('{}'))), ?1 FROM n`,
      new Date().toISOString(),
    );
    const [{ head }] = await sql(agentDo(tenantId, agent.id), "SELECT max(last_seq) AS head FROM events");
    const first = await agentDo(tenantId, agent.id).pruneNow(Date.now());
    expect(first).toMatchObject({ ok: true, deleted: { events: 500 }, more: true });
    const second = await agentDo(tenantId, agent.id).pruneNow(Date.now());
    expect(second.more).toBe(false);
    expect(await count(agentDo(tenantId, agent.id), "events")).toBe(1_000);
    const [{ oldest }] = await sql(agentDo(tenantId, agent.id), "SELECT min(seq) AS oldest FROM events");
    expect(oldest).toBe(head - 1_000 + 1);
  });

  it("prunes the tenant's events, dispatched notification batches, change units, idempotency records and settled deliveries by age; the stream answers cursor_expired", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await converse(key, agent.id, "hello");
    const category = await api("POST", "/v1/journal/categories", { key, body: { name: "Garden", color: "#22aa55" }, headers: { "idempotency-key": "category-1" } });
    expect(category.status).toBe(201);
    const tenant = tenantDo(tenantId);
    // A settled outbound delivery and a pending one (pending deliveries are never pruned).
    for (const [id, status] of [["wd_settled", "delivered"], ["wd_pending", "pending"]]) {
      await sql(
        tenant,
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, agent_id, event_type, status, body, attempts, attempt_log, created_at, updated_at)
         VALUES (?, 'we_x', 1, NULL, 'run.completed', ?, '{}', 1, '[]', ?, ?)`,
        id, status, OLD, OLD,
      );
    }
    const [{ mark }] = await sql(tenant, "SELECT max(seq) AS mark FROM tenant_events");
    expect(mark).toBeGreaterThan(0);
    // One row per run report or tenant-level event: fewer rows than seqs.
    const eventRows = await count(tenant, "tenant_events");
    expect(await count(tenant, "notification_batches")).toBeGreaterThan(0);
    expect(await count(tenant, "change_units")).toBeGreaterThan(0);
    expect(await count(tenant, "idempotency")).toBeGreaterThan(0);
    await sql(tenant, "UPDATE tenant_events SET created_at = ?", OLD);
    await sql(tenant, "UPDATE notification_batches SET created_at = ? WHERE dispatched_at IS NOT NULL", OLD);
    await sql(tenant, "UPDATE change_units SET created_at = ?", OLD);
    await sql(tenant, "UPDATE idempotency SET created_at = ?", OLD);
    const journalBefore = await count(tenant, "journal_entities");
    const auditBefore = await count(tenant, "audit");

    const pruned = await tenant.pruneNow(Date.now());
    expect(pruned.ok).toBe(true);
    expect(pruned.deleted.tenantEvents).toBe(eventRows);
    expect(await count(tenant, "tenant_events")).toBe(0);
    expect(await count(tenant, "notification_batches WHERE dispatched_at IS NOT NULL")).toBe(0);
    expect(await count(tenant, "change_units")).toBe(0);
    expect(await count(tenant, "idempotency")).toBe(0);
    expect((await sql(tenant, "SELECT id FROM webhook_deliveries")).map((row) => row.id)).toEqual(["wd_pending"]);
    expect(await count(tenant, "journal_entities")).toBe(journalBefore);
    expect(await count(tenant, "audit")).toBe(auditBefore);

    const expired = await api("GET", "/v1/events/stream", { key, headers: { "last-event-id": "1" } });
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ code: "cursor_expired", oldestSeq: mark + 1 });
    // From the mark on, the stream opens.
    const resumed = await SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}`, "last-event-id": String(mark) } });
    expect(resumed.status).toBe(200);
    await resumed.body?.cancel();
  });
});
