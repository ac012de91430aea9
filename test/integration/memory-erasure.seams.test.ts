import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../src/config";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { ADMIN, api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`)) as any;
const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId)) as any;

/**
 * Every row of every table (governance's VIGIL_FAULTS-only dump seam). After an erasure the only
 * rows allowed are schema bookkeeping: drizzle's migration ledger (hash + timestamp) and FTS5's
 * format version — no data.
 */
async function assertErased(stub: any, secrets: string[]) {
  const dump = await stub.debugDumpTables();
  expect(dump.ok).toBe(true);
  const tables = dump.tables as Record<string, Array<Record<string, unknown>>>;
  expect(Object.keys(tables).length).toBeGreaterThan(3);
  for (const [name, rows] of Object.entries(tables)) {
    if (name === "__drizzle_migrations") {
      for (const row of rows) expect(Object.keys(row).sort()).toEqual(["created_at", "hash", "id"]);
    } else if (name.endsWith("_fts_config")) {
      // FTS5's own shadow tables, written when the (empty) index is created: the format version…
      for (const row of rows) expect(row.k).toBe("version");
    } else if (name.endsWith("_fts_data")) {
      // …and the empty index's structure (id 1) and averages (id 10) records: a few bytes, no terms.
      for (const row of rows) {
        expect([1, 10]).toContain(row.id);
        expect(((row.block as { blobHex: string }).blobHex ?? "").length, JSON.stringify(row)).toBeLessThanOrEqual(32);
      }
    } else {
      expect(rows, name).toEqual([]);
    }
  }
  const text = JSON.stringify(tables);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

async function busyAgent(key: string, text: string) {
  const agent = await createAgent(key, { kind: "coach", displayName: `Coach ${text}`, model: "builtin:echo" });
  expect((await api("POST", `/v1/agents/${agent.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }] } })).status).toBe(201);
  expect((await api("POST", `/v1/agents/${agent.id}/timers`, { key, body: { spec: { kind: "interval", everySeconds: 3600 } } })).status).toBe(201);
  const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
  expect((await waitForRun(key, agent.id, sent.body.runKey)).status).toBe("completed");
  return agent;
}

describe("agent erasure after destroy", () => {
  it("destroy arms erasure at the end of the soft-delete window; erasure leaves no row in the agent's SQLite and the tenant forgets it", async () => {
    const { tenantId, key } = await createTenant("erasure-agent");
    const doomed = await busyAgent(key, "my secret diary entry about the knee");
    const bystander = await busyAgent(key, "bystander keeps talking");

    const destroyed = await api("DELETE", `/v1/agents/${doomed.id}`, { key });
    expect(destroyed.status).toBe(200);
    const schedules = await runInDurableObject(agentDo(tenantId, doomed.id), async (instance: AgentDO) => (instance as any).getSchedules());
    const erasure = (schedules as Array<{ callback: string; time: number }>).find((row) => row.callback === "onErasureDue");
    expect(erasure).toBeDefined();
    const window = erasure!.time - Math.floor(Date.parse(destroyed.body.updatedAt) / 1000);
    expect(Math.abs(window - config.erasure.softDeleteSeconds)).toBeLessThanOrEqual(2);

    // Inside the window the history is soft-deleted, not gone; a due check before the window only re-arms.
    expect((await api("GET", `/v1/agents/${doomed.id}`, { key })).body.lifecycle).toBe("destroyed");
    // Soft-deleted means hidden (issue 13): the history answers 404 at once, though its rows stay until erasure.
    expect((await api("GET", `/v1/agents/${doomed.id}/messages`, { key })).status).toBe(404);
    expect(await runInDurableObject(agentDo(tenantId, doomed.id), async (instance: AgentDO) => instance.parts.erasure.eraseIfDue(false))).toEqual({ ok: true, receipt: null });

    const forced = await agentDo(tenantId, doomed.id).forceErasure();
    expect(forced.ok).toBe(true);
    expect(forced.receipt).toMatchObject({ agentId: doomed.id, tenantId, reason: "forced" });
    expect(forced.receipt.rows.messages).toBeGreaterThan(0);
    await assertErased(agentDo(tenantId, doomed.id), [doomed.id, tenantId, "secret diary", "Coach my secret"]);

    expect((await api("GET", `/v1/agents/${doomed.id}`, { key })).status).toBe(404);
    expect((await api("POST", `/v1/agents/${doomed.id}/messages`, { key, body: { text: "hello?" } })).status).toBe(404);
    const listed = (await api("GET", "/v1/agents?limit=100", { key })).body.data.map((agent: any) => agent.id);
    expect(listed).toEqual([bystander.id]);
    const audit = (await api("GET", "/v1/audit?limit=100", { key })).body.data;
    const entry = audit.find((row: any) => row.action === "agent.erased");
    expect(entry).toMatchObject({ target: doomed.id, actor: "system" });
    expect(entry.detail.reason).toBe("forced");
    expect(entry.detail.tenantRows.agent_directory).toBe(1);
    expect(entry.detail.tenantRows.subscriptions).toBe(1);
    const tenantTables = (await tenantDo(tenantId).debugDumpTables()).tables as Record<string, unknown[]>;
    for (const name of ["agent_directory", "subscriptions", "subscription_tokens", "agent_triggers", "decisions"]) {
      expect(JSON.stringify(tenantTables[name] ?? []), name).not.toContain(doomed.id);
    }

    // The bystander is untouched.
    const again = await api("POST", `/v1/agents/${bystander.id}/messages`, { key, body: { text: "still here" } });
    expect((await waitForRun(key, bystander.id, again.body.runKey)).status).toBe("completed");
  });

  it("a live agent is never erased by the due check or the seam", async () => {
    const { tenantId, key } = await createTenant("erasure-live");
    const agent = await busyAgent(key, "alive and well");
    const refused = await agentDo(tenantId, agent.id).forceErasure();
    expect(refused).toMatchObject({ ok: false, code: "not_found" });
    expect((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.length).toBe(2);
  });
});

describe("tenant erasure", () => {
  it("DELETE /v1/tenants/:id (operator) erases every agent and every tenant row; the record survives in the operator audit", async () => {
    const { tenantId, key } = await createTenant("erasure-tenant-acme");
    const other = await createTenant("erasure-neighbour");
    const neighbour = await busyAgent(other.key, "neighbour data");
    const first = await busyAgent(key, "first agent private text");
    const second = await busyAgent(key, "second agent private text");
    expect((await api("POST", "/v1/journal/categories", { key, body: { name: "Gym private" } })).status).toBe(201);

    expect((await api("DELETE", `/v1/tenants/${tenantId}`)).status).toBe(401);
    expect((await api("DELETE", `/v1/tenants/${tenantId}`, { key })).status).toBe(401);
    expect((await api("DELETE", "/v1/tenants/not-a-tenant", { key: ADMIN })).status).toBe(404);
    expect((await api("GET", `/v1/tenants/${tenantId}/erasure`, { key: ADMIN })).status).toBe(404);

    const erased = await api("DELETE", `/v1/tenants/${tenantId}`, { key: ADMIN });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ tenantId, agentsErased: 2, erasedAt: expect.any(String) });

    expect((await api("GET", "/v1/agents", { key })).status).toBe(401);
    const secrets = [tenantId, first.id, second.id, "private text", "Gym private", "erasure-tenant-acme"];
    await assertErased(tenantDo(tenantId), secrets);
    await assertErased(agentDo(tenantId, first.id), secrets);
    await assertErased(agentDo(tenantId, second.id), secrets);

    const record = await api("GET", `/v1/tenants/${tenantId}/erasure`, { key: ADMIN });
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ tenantId, actor: "operator", detail: { agentsErased: 2 } });
    expect(record.body.detail.tenantRows.api_keys).toBeGreaterThan(0);
    expect((await api("DELETE", `/v1/tenants/${tenantId}`, { key: ADMIN })).status).toBe(404);

    // Another tenant is untouched.
    const neighbourRun = await api("POST", `/v1/agents/${neighbour.id}/messages`, { key: other.key, body: { text: "still here" } });
    expect((await waitForRun(other.key, neighbour.id, neighbourRun.body.runKey)).status).toBe("completed");
  });
});
