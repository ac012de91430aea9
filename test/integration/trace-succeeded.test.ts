import { describe, expect, it } from "vitest";
import { agentDo, createAgent, createTenant, inDo } from "./helpers";

/**
 * A successful model call's attempt and usage rows are written by one statement
 * (`RunTrace.succeeded`). The rows must be those `attempt` then `usage` write: the same seqs (after any rows the run
 * already has), kinds, stored JSON text and one time for both; the usage is booked against the day as before.
 */
describe("a model call's attempt and usage rows in one statement", () => {
  it("stores exactly what attempt() then usage() store, numbered after the run's existing rows", { timeout: 30_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const trace = instance.parts.runTrace;
      const rows = (runKey: string) =>
        state.storage.sql.exec("SELECT seq, kind, data, created_at FROM run_trace WHERE run_key = ? ORDER BY seq", runKey).toArray() as Array<{ seq: number; kind: string; data: string; created_at: string }>;
      const attempt = { provider: "builtin", model: "echo", attempt: 1, outcome: "succeeded" as const, status: null, durationMs: 0, step: 2 };
      const usage = { provider: "builtin", model: "echo", inputTokens: 12, outputTokens: 3, costMicros: 0, step: 2 };
      const tokens = async (): Promise<number> => (await instance.getUsage()).usage.usage.tokens;
      const tokensBefore = await tokens();
      for (const prior of [0, 2]) {
        const [one, two] = [`rk-one-${prior}`, `rk-two-${prior}`];
        for (let i = 0; i < prior; i++) for (const runKey of [one, two]) trace.policy(runKey, { gate: "inference", outcome: "allowed", subject: `m${i}` });
        trace.succeeded(one, attempt, usage);
        trace.attempt(two, attempt);
        trace.usage(two, usage);
        const [got, want] = [rows(one), rows(two)];
        expect(got.map(({ created_at: _at, ...row }) => row)).toEqual(want.map(({ created_at: _at, ...row }) => row));
        expect(got.slice(prior).map((row) => [row.seq, row.kind])).toEqual([[prior + 1, "attempt"], [prior + 2, "usage"]]);
        expect(got[prior]!.created_at).toBe(got[prior + 1]!.created_at);
        expect(Number.isNaN(Date.parse(got[prior]!.created_at))).toBe(false);
      }
      // Both ways book the call's tokens against the day (two calls each way, 15 tokens a call).
      expect((await tokens()) - tokensBefore).toBe(4 * 15);
    });
  });
});
