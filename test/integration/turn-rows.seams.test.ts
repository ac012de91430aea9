import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { storageFootprint, type StorageFootprint } from "../../src/objects/shared/storage-footprint";
import { agentDo, api, createAgent, createTenant, eventually, inDo, readSseUntil, waitForRun } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));
const footprint = (stub: unknown) => inDo(stub, (_instance, state) => storageFootprint(state.storage.sql));

/** Per table: what `after` holds beyond `before` (tables whose count did not change are left out). */
function added(before: StorageFootprint, after: StorageFootprint): { rows: Record<string, number>; bytes: Record<string, number> } {
  const rows: Record<string, number> = {};
  const bytes: Record<string, number> = {};
  for (const [table, n] of Object.entries(after.rows)) if (n !== (before.rows[table] ?? 0)) rows[table] = n - (before.rows[table] ?? 0);
  for (const [table, b] of Object.entries(after.payload)) if (b !== (before.payload[table] ?? 0)) bytes[table] = b - (before.payload[table] ?? 0);
  return { rows, bytes };
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe("rows a chat turn stores", () => {
  it("a builtin-echo chat turn adds one event row at the agent and one at the tenant, and its events still replay", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const turn = async (text: string) => {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      expect(sent.status).toBe(202);
      await waitForRun(key, agent.id, sent.body.runKey);
      // The run's report has reached the tenant once its stream shows the run's end.
      await eventually(async () => {
        const stream = await SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}`, "last-event-id": "0" } });
        const frames = await readSseUntil(stream, (seen) => seen.some((f) => f.event === "run.completed" && f.data.runKey === sent.body.runKey), 2_000);
        return frames.some((f) => f.event === "run.completed" && f.data.runKey === sent.body.runKey);
      });
    };
    await turn("warm up");
    const [agentBefore, tenantBefore] = [await footprint(agentDo(tenantId, agent.id)), await footprint(tenantDo(tenantId))];
    await turn("hello there");
    const agentAdded = added(agentBefore, await footprint(agentDo(tenantId, agent.id)));
    const tenantAdded = added(tenantBefore, await footprint(tenantDo(tenantId)));
    console.log(JSON.stringify({ agent: agentAdded, tenant: tenantAdded, rows: sum(agentAdded.rows) + sum(tenantAdded.rows), bytes: sum(agentAdded.bytes) + sum(tenantAdded.bytes) }));
    // The turn's events: one agent log row (its run's six events) and one tenant stream row (its report).
    expect(agentAdded.rows.events).toBe(1);
    expect(tenantAdded.rows.tenant_events).toBe(1);
    expect(sum(agentAdded.rows) + sum(tenantAdded.rows)).toBeLessThanOrEqual(10);
  });
});
