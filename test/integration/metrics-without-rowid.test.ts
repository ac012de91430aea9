import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import migrations from "../../migrations/tenant";
import { api, createAgent, createTenant, inDo, waitForRun } from "./helpers";

const metricsText = async (key: string) => (await api("GET", "/v1/metrics", { key })).body as string;
const runsCompleted = (text: string) => Number(/^vigil_runs_total\{outcome="completed"\} (\d+)$/m.exec(text)?.[1] ?? 0);

/**
 * Tenant migration 0012 rebuilds `metrics` WITHOUT ROWID. A tenant's counters from before it keep their values, later
 * run reports add to them, and an upsert of a counter reads its one row instead of an index entry and a row.
 */
describe("tenant migration 0012: metrics WITHOUT ROWID", () => {
  it("keeps every counter, adds later reports to them, and reads one row per counter upsert", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "before" } });
    await waitForRun(key, agent.id, first.body.runKey);
    const tenant = env.TENANT.get(env.TENANT.idFromName(tenantId));
    const completedBefore = runsCompleted(await metricsText(key));
    expect(completedBefore).toBeGreaterThanOrEqual(1);
    await inDo(tenant, (_instance, state) => {
      const sql = state.storage.sql;
      // The rowid shape of before, holding the counters the report wrote; then the migration over it.
      sql.exec("CREATE TABLE metrics_old (name text NOT NULL, labels text NOT NULL, value integer NOT NULL, PRIMARY KEY(name, labels))");
      sql.exec("INSERT INTO metrics_old SELECT * FROM metrics");
      sql.exec("DROP TABLE metrics");
      sql.exec("ALTER TABLE metrics_old RENAME TO metrics");
      const before = sql.exec("SELECT * FROM metrics ORDER BY name, labels").toArray();
      expect(before.length).toBeGreaterThan(0);
      for (const statement of migrations.migrations.m0012.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) sql.exec(text);
      }
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'metrics'").one().sql).toContain("WITHOUT ROWID");
      expect(sql.exec("SELECT * FROM metrics ORDER BY name, labels").toArray()).toEqual(before);
    });

    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after" } });
    await waitForRun(key, agent.id, next.body.runKey);
    const counted = await waitForCount(key, completedBefore + 1);
    expect(counted).toBe(completedBefore + 1);
    const reads = await inDo(tenant, (_instance, state) => {
      const cursor = state.storage.sql.exec(
        "INSERT INTO metrics (name, labels, value) VALUES ('vigil_runs_total', 'outcome=\"completed\"', 1) ON CONFLICT (name, labels) DO UPDATE SET value = metrics.value + excluded.value",
      );
      cursor.toArray();
      return { read: cursor.rowsRead, written: cursor.rowsWritten };
    });
    expect(reads).toEqual({ read: 0, written: 1 });
  });
});

async function waitForCount(key: string, at: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const n = runsCompleted(await metricsText(key));
    if (n >= at) return n;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return runsCompleted(await metricsText(key));
}
