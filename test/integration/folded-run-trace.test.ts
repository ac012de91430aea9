import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { isFolded, packRunTrace, unpackRunTrace } from "../../src/objects/agent/rows/stored-trace";
import { unfoldEntries } from "../../src/objects/agent/rows/folded-trace";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

/**
 * Issue 12 §6 (session 7): when a run ends, its run_trace rows are folded into its run row and deleted in the same
 * transaction. Every reader — the run view, the runs list, the trace rows the OTel export reads, the export, the
 * run.completed event — must answer exactly what it answers for the same run stored the earlier way (rows in
 * run_trace, a lean trace without them, started_at / ended_at in full), and rows written after the run ended come
 * after the folded ones.
 */
describe("a finished run's trace rows folded into its run row", () => {
  it("reads the same as the rows kept in run_trace, in every reader", async () => {
    const { key, tenantId } = await createTenant();
    const playbook = { rules: [{ when: { reason: "toolResult" }, reply: "noted" }, { when: {}, reply: "done" }] };
    const agent = await createAgent(key, { kind: "orchestrator", model: "builtin:playbook", playbook });
    const keys: string[] = [];
    for (const text of ['/tool memory_search {"query":"gym"}', "plain hello"]) {
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text } });
      expect((await waitForRun(key, agent.id, sent.body.runKey)).status).toBe("completed");
      keys.push(sent.body.runKey);
    }
    const stub = agentDo(tenantId, agent.id);

    const read = async () => ({
      details: await Promise.all(keys.map(async (runKey) => (await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body)),
      list: (await api("GET", `/v1/agents/${agent.id}/runs?limit=50`, { key })).body,
      rows: await runInDurableObject(stub, (instance: AgentDO) => keys.map((runKey) => instance.parts.runTrace.rows(runKey))),
      exported: (await api("GET", `/v1/agents/${agent.id}/export`, { key })).body.runs,
      completed: await runInDurableObject(stub, (instance: AgentDO) => instance.parts.events.listAfter(0, 500).filter((e: any) => e.type === "run.completed").map((e: any) => e.data)),
    });

    // Stored folded: no run_trace rows left for these runs, the run row holds them.
    const stored = await runInDurableObject(stub, (_instance: AgentDO, state) => {
      const sql = state.storage.sql;
      const left = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM run_trace WHERE run_key IN (?, ?)`, ...keys).one().n;
      const runs = keys.map((runKey) => sql.exec<Record<string, any>>("SELECT * FROM runs WHERE run_key = ?", runKey).one());
      return { left, runs };
    });
    expect(stored.left).toBe(0);
    for (const run of stored.runs) expect(isFolded(JSON.parse(run.trace))).toBe(true);
    const folded = await read();
    expect(folded.rows.every((rows) => rows.length >= 2)).toBe(true);
    expect(folded.details[0].trace.attempts.length).toBeGreaterThan(0);
    expect(folded.details[0].trace.usage.calls).toBeGreaterThan(0);

    // The same runs stored the way they were before: rows in run_trace (per-run seq), the trace lean without them.
    await runInDurableObject(stub, (_instance: AgentDO, state) => {
      const sql = state.storage.sql;
      for (const run of stored.runs) {
        const context = { runKey: run.run_key, reason: run.reason, attempt: run.attempt, enqueuedAt: run.enqueued_at };
        const trace = JSON.parse(run.trace);
        const entries = unfoldEntries(trace, context);
        for (const [i, entry] of entries.entries()) sql.exec("INSERT INTO run_trace (run_key, seq, kind, data, created_at) VALUES (?, ?, ?, ?, ?)", run.run_key, i + 1, entry.kind, JSON.stringify(entry.data), entry.createdAt);
        const unfolded = packRunTrace(unpackRunTrace(trace, context), context);
        expect(isFolded(unfolded)).toBe(false);
        // started_at / ended_at are full timestamps.
        expect(new Date(run.started_at).toISOString()).toBe(run.started_at);
        expect(new Date(run.ended_at).toISOString()).toBe(run.ended_at);
        sql.exec("UPDATE runs SET trace = ? WHERE run_key = ?", JSON.stringify(unfolded), run.run_key);
      }
    });
    const unfolded = await read();
    expect(unfolded).toEqual(folded);
    expect(JSON.stringify(unfolded)).toBe(JSON.stringify(folded));

    // A row written after a run ended (here: into a folded run again) reads after the folded ones.
    await runInDurableObject(stub, (instance: AgentDO, state) => {
      const sql = state.storage.sql;
      for (const run of stored.runs) {
        sql.exec("DELETE FROM run_trace WHERE run_key = ?", run.run_key);
        sql.exec("UPDATE runs SET trace = ?, started_at = ?, ended_at = ? WHERE run_key = ?", run.trace, run.started_at, run.ended_at, run.run_key);
      }
      instance.parts.runTrace.policy(keys[1]!, { gate: "late", outcome: "allowed" });
      const rows = instance.parts.runTrace.rows(keys[1]!);
      expect(rows.slice(0, -1)).toEqual(folded.rows[1]);
      expect(rows.at(-1)).toMatchObject({ kind: "policy", data: { gate: "late", outcome: "allowed" } });
      expect(instance.parts.runTrace.view(keys[1]!).policy.at(-1)).toMatchObject({ gate: "late" });
    });
  });
});
