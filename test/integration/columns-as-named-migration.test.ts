import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import { agentDo, api, createAgent, createTenant, inDo, waitForRun } from "./helpers";

/** Runs one checked-in migration's statements on the object's SQLite, as drizzle's migrator splits them. */
function applyMigration(state: DurableObjectState, name: keyof typeof migrations.migrations): void {
  for (const statement of migrations.migrations[name].split("--> statement-breakpoint")) {
    const text = statement.replace(/^\s*--.*$/gm, "").trim();
    if (text) state.storage.sql.exec(text);
  }
}

/**
 * Migration 0013: rows stored in the older, abbreviated forms (a run's times as `+<ms>` after its enqueueing, a
 * message's link and run key as '' for "the previous message's") become the values their columns name, and read
 * through the API exactly as they did.
 */
describe("migration 0013: columns hold what their names say", () => {
  it("rewrites `+<ms>` run times and '' message links of an agent that ran before it, keeping what the API reads", { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "before the migration" } });
    const runKey = sent.body.runKey as string;
    await waitForRun(key, agent.id, runKey);
    const stub = agentDo(tenantId, agent.id);
    const readRun = async () => (await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body;
    const readMessages = async () => (await api("GET", `/v1/agents/${agent.id}/messages?limit=50`, { key })).body.data;
    const run = await readRun();
    const messages = await readMessages();
    expect(messages.length).toBeGreaterThanOrEqual(2);

    // The older forms, as agents wrote them before: times relative to the enqueueing, links and run keys as ''.
    const stored = await inDo(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ enqueued_at: string; started_at: string; ended_at: string }>("SELECT enqueued_at, started_at, ended_at FROM runs WHERE run_key = ?", runKey).one();
      const ms = (iso: string) => `+${Date.parse(iso) - Date.parse(row.enqueued_at)}`;
      sql.exec("UPDATE runs SET started_at = ?, ended_at = ? WHERE run_key = ?", ms(row.started_at), ms(row.ended_at), runKey);
      const linked = sql.exec<{ seq: number }>("SELECT seq FROM messages WHERE prev_message_id IS NOT NULL ORDER BY seq").toArray();
      for (const { seq } of linked) sql.exec("UPDATE messages SET prev_message_id = '' WHERE seq = ?", seq);
      // A reply stored its run key as '' when the message before it had the same one in full.
      sql.exec("UPDATE messages SET run_key = '' WHERE run_key IS NOT NULL AND run_key = (SELECT p.run_key FROM messages p WHERE p.thread_id = messages.thread_id AND p.seq < messages.seq AND p.run_key != '' ORDER BY p.seq DESC LIMIT 1)");
      return { row, abbreviated: sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages WHERE prev_message_id = '' OR run_key = ''").one().n };
    });
    expect(stored.abbreviated).toBeGreaterThan(0);

    await inDo(stub, (_instance, state) => {
      applyMigration(state, "m0013");
      const sql = state.storage.sql;
      const row = sql.exec<{ started_at: string; ended_at: string }>("SELECT started_at, ended_at FROM runs WHERE run_key = ?", runKey).one();
      expect(row).toEqual({ started_at: stored.row.started_at, ended_at: stored.row.ended_at });
      expect(sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages WHERE prev_message_id = '' OR run_key = ''").one().n).toBe(0);
    });
    expect(await readRun()).toEqual(run);
    expect(await readMessages()).toEqual(messages);

    // A later run stores its times and links in full.
    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after the migration" } });
    expect((await waitForRun(key, agent.id, next.body.runKey)).status).toBe("completed");
    await inDo(stub, (_instance, state) => {
      const sql = state.storage.sql;
      expect(sql.exec<{ n: number }>("SELECT count(*) AS n FROM runs WHERE started_at LIKE '+%' OR ended_at LIKE '+%'").one().n).toBe(0);
      expect(sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages WHERE prev_message_id = '' OR run_key = ''").one().n).toBe(0);
    });
  });
});
