import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import { agentDo, api, createAgent, createTenant, inDo, openEvents, readSseUntil, waitForRun } from "./helpers";

type Frame = { id?: number; event: string; data: any };
const persisted = (frames: Frame[]) => frames.filter((f) => f.id !== undefined);

/**
 * Migration 0015 reshapes the agent's event log from one row per event into one row per stretch of a run's events. An
 * agent's log from before it must replay exactly as it did, under the same seqs, and later appends continue after it.
 */
describe("migration 0015: the event log keeps one row per run", () => {
  it("replays a log stored one row per event exactly as before, and a later run's seqs follow it", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "before the migration" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const ended = (runKey: string) => (frames: Frame[]) => frames.some((f) => f.event === "run.completed" && f.data.runKey === runKey);
    const before = persisted(await readSseUntil(await openEvents(key, agent.id, { after: 0 }), ended(sent.body.runKey)));
    expect(before.length).toBeGreaterThan(3);

    await inDo(agentDo(tenantId, agent.id), (_instance, state) => {
      const sql = state.storage.sql;
      // The 0014 shape: one row per event, as the log stands now.
      const events = sql
        .exec<Record<string, any>>("SELECT events.seq + item.key AS seq, run_key, item.value AS item FROM events, json_each(events.items) AS item ORDER BY 1")
        .toArray();
      sql.exec("DROP TABLE events");
      sql.exec("CREATE TABLE `events` (`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `type` text NOT NULL, `run_key` text, `data` text NOT NULL, `created_at` text NOT NULL)");
      sql.exec("CREATE INDEX `events_run_key` ON `events` (`run_key`)");
      for (const row of events) {
        const [type, createdAt, data] = JSON.parse(row.item);
        sql.exec("INSERT INTO events VALUES (?, ?, ?, ?, ?)", row.seq, type, row.run_key, JSON.stringify(data), createdAt);
      }
      for (const statement of migrations.migrations.m0015.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) sql.exec(text);
      }
      expect(sql.exec<{ n: number }>("SELECT count(*) AS n FROM events").one().n).toBe(events.length);
    });
    const after = persisted(await readSseUntil(await openEvents(key, agent.id, { after: 0 }), ended(sent.body.runKey)));
    expect(after).toEqual(before);
    const middle = before[2]!.id!;
    expect(persisted(await readSseUntil(await openEvents(key, agent.id, { lastEventId: middle }), ended(sent.body.runKey)))).toEqual(before.filter((f) => f.id! > middle));

    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after the migration" } });
    await waitForRun(key, agent.id, next.body.runKey);
    const later = persisted(await readSseUntil(await openEvents(key, agent.id, { after: before.at(-1)!.id! }), ended(next.body.runKey)));
    expect(later[0]!.id).toBe(before.at(-1)!.id! + 1);
    expect(later.find((f) => f.event === "message.appended" && f.data.data.message?.kind === "assistant")?.data.data.message.text).toBe("echo: after the migration");
    // The new run's events share one row.
    const rows = await inDo(agentDo(tenantId, agent.id), (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM events WHERE run_key = ?", next.body.runKey).one().n);
    expect(rows).toBe(1);
  });
});
