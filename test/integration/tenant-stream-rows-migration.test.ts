import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import migrations from "../../migrations/tenant";
import { api, createAgent, createTenant, inDo, readSseUntil, waitForRun } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));
const replay = async (key: string, after: number, done: (frames: Array<{ id?: number; event: string; data: any }>) => boolean) =>
  readSseUntil(await SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}`, "last-event-id": String(after) } }), done, 5_000);

/**
 * Migration 0013 reshapes the tenant stream from one row per event into one row per report. A tenant's stream from
 * before it must replay exactly as it did, under the same seqs, and later reports continue after them.
 */
describe("migration 0013: the tenant stream keeps one row per report", () => {
  it("replays a stream stored one row per event exactly as before, and a later report's seqs follow it", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "before the migration" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const ended = (runKey: string) => (frames: Array<{ event: string; data: any }>) => frames.some((f) => f.event === "run.completed" && f.data.runKey === runKey);
    const before = await replay(key, 0, ended(sent.body.runKey));
    expect(before.length).toBeGreaterThan(3);

    // The 0012 shape: one row per event, as the events stand now.
    await inDo(tenantDo(tenantId), (_instance, state) => {
      const sql = state.storage.sql;
      const events = sql
        .exec<Record<string, any>>("SELECT seq AS last, agent_id, items FROM tenant_events ORDER BY seq")
        .toArray()
        .flatMap((row) => (JSON.parse(row.items) as any[]).map((item, i, all) => ({ seq: row.last - all.length + 1 + i, agentId: row.agent_id, item })));
      sql.exec("DROP TABLE tenant_events");
      sql.exec(
        "CREATE TABLE `tenant_events` (`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `type` text NOT NULL, `agent_id` text, `agent_seq` integer, `run_key` text, `data` text NOT NULL, `created_at` text NOT NULL)",
      );
      sql.exec("CREATE UNIQUE INDEX `tenant_events_agent_seq` ON `tenant_events` (`agent_id`,`agent_seq`)");
      for (const { seq, agentId, item } of events) {
        const [type, agentSeq, runKey, createdAt, data] = item;
        sql.exec("INSERT INTO tenant_events VALUES (?, ?, ?, ?, ?, ?, ?)", seq, type, agentId, agentSeq, runKey, JSON.stringify(data), createdAt);
      }
      for (const statement of migrations.migrations.m0013.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) sql.exec(text);
      }
    });
    const after = await replay(key, 0, ended(sent.body.runKey));
    expect(after).toEqual(before);
    // Resuming in the middle gives the rest, unchanged.
    const middle = before[2]!.id!;
    expect(await replay(key, middle, ended(sent.body.runKey))).toEqual(before.filter((f) => f.id! > middle));

    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after the migration" } });
    await waitForRun(key, agent.id, next.body.runKey);
    const later = await replay(key, before.at(-1)!.id!, ended(next.body.runKey));
    expect(later.length).toBeGreaterThan(0);
    expect(later[0]!.id).toBe(before.at(-1)!.id! + 1);
    expect(later.find((f) => f.event === "message.appended" && f.data.data.message?.kind === "assistant")?.data.data.message.text).toBe("echo: after the migration");
  });
});
