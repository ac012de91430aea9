import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import { agentDo, api, createAgent, createTenant, inDo, waitForRun } from "./helpers";

/**
 * Migration 0011 rebuilds `runs` and `run_trace` as WITHOUT ROWID tables. An agent's rows from before it
 * must read exactly as they did: here the tables are put back in their 0010 shape holding what a run stored then, the
 * migration's statements run over them, and the run and its trace are read through the API before and after.
 */
describe("migration 0011: runs and run_trace WITHOUT ROWID", () => {
  it("keeps every run and trace row of an agent that ran before it", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "before the migration" } });
    const runKey = sent.body.runKey as string;
    await waitForRun(key, agent.id, runKey);
    const stub = agentDo(tenantId, agent.id);

    // The 0010 shape, holding the run as a whole trace (no lean marker) and its trace rows with global seqs.
    await inDo(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const run = sql.exec<Record<string, any>>("SELECT * FROM runs WHERE run_key = ?", runKey).one();
      const whole = { reason: run.reason, coalescedRunKeys: [], ...JSON.parse(run.trace) };
      delete whole["~"];
      const trace = sql.exec<Record<string, any>>("SELECT * FROM run_trace WHERE run_key = ? ORDER BY seq", runKey).toArray();
      sql.exec("DROP TABLE runs");
      sql.exec("DROP TABLE run_trace");
      sql.exec(
        "CREATE TABLE `runs` (`run_key` text PRIMARY KEY NOT NULL, `reason` text NOT NULL, `thread_id` text NOT NULL, `status` text NOT NULL, `attempt` integer NOT NULL, `enqueued_at` text NOT NULL, `started_at` text, `ended_at` text, `error_code` text, `trace` text NOT NULL)",
      );
      sql.exec("CREATE INDEX `runs_enqueued` ON `runs` (`enqueued_at`)");
      sql.exec("CREATE TABLE `run_trace` (`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `run_key` text NOT NULL, `kind` text NOT NULL, `data` text NOT NULL, `created_at` text NOT NULL)");
      sql.exec("CREATE INDEX `run_trace_run` ON `run_trace` (`run_key`,`seq`)");
      sql.exec("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", run.run_key, run.reason, run.thread_id, run.status, run.attempt, run.enqueued_at, run.started_at, run.ended_at, run.error_code, JSON.stringify(whole));
      for (const [i, row] of trace.entries()) sql.exec("INSERT INTO run_trace (seq, run_key, kind, data, created_at) VALUES (?, ?, ?, ?, ?)", 40 + i * 7, row.run_key, row.kind, row.data, row.created_at);
    });
    const before = await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key });
    expect(before.status).toBe(200);

    await inDo(stub, (_instance, state) => {
      for (const statement of migrations.migrations.m0011.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) state.storage.sql.exec(text);
      }
      const shapes = state.storage.sql.exec<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE name IN ('runs', 'run_trace')").toArray();
      expect(shapes.every((table) => table.sql.includes("WITHOUT ROWID"))).toBe(true);
    });
    const after = await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key });
    expect(after.body).toEqual(before.body);
    expect(after.body.trace.attempts.length).toBeGreaterThan(0);

    // A later run appends trace rows after the copied ones, and both runs list.
    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "after the migration" } });
    const run = await waitForRun(key, agent.id, next.body.runKey);
    expect(run.status).toBe("completed");
    const listed = await api("GET", `/v1/agents/${agent.id}/runs?limit=10`, { key });
    expect(listed.body.data.map((r: any) => r.runKey)).toEqual(expect.arrayContaining([runKey, next.body.runKey]));
  });
});
