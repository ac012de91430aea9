import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { benchMemory } from "../../src/objects/agent/memory";
import { createAgent, createTenant } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

/**
 * Issue 12 §8 (session 8): the append + assemble op's cost is mostly its SQLite statements, so their number is
 * bounded here on a real agent (no timing). The op is the bench's (`bench/history.mjs`): append a message, plan
 * (and work off) compaction as a run does after it, assemble the run context. Until session 8 it ran 18.5
 * statements; the bounds are what it runs now, so a read added back to the path fails this test.
 */
describe("append + assemble statements (issue 12 §8)", () => {
  it("an append is 2 statements (message, event), an assemble 4 (state, hot page, report heads, summaries), the op ≤ 10 on average with compaction", { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO, state: DurableObjectState) => {
      const { history, memoryContext, compaction } = instance.parts;
      const memory = benchMemory(memoryContext, compaction);
      const threadId = "statement-count";
      // A thread with summaries (warm, and between hot rows) and '' stored links, caught up as a steady agent is.
      for (let i = 0; i < 120; i++) history.append({ id: `seed-${i}`, threadId, kind: i % 2 ? "assistant" : "user", text: `seed ${i}`, runKey: `run-${i >> 1}` });
      while ((await memory.catchUp(threadId)) > 0);
      expect(compaction.compactedThroughSeq(threadId)).toBeGreaterThan(0);

      const sql = state.storage.sql;
      const exec = sql.exec;
      let statements = 0;
      const count = <T>(fn: () => T): T => {
        statements = 0;
        return fn();
      };
      sql.exec = function (this: SqlStorage, ...args: Parameters<SqlStorage["exec"]>) {
        statements++;
        return exec.apply(this, args);
      } as SqlStorage["exec"];
      try {
        count(() => history.append({ id: "counted-append", threadId, kind: "user", text: "counted", runKey: "run-counted" }));
        expect(statements).toBe(2);
        const assembled = count(() => memoryContext.assemble(threadId));
        expect(statements).toBe(4);
        // The assemble read what it should: the appended message last, summaries in the memory block.
        expect(assembled.hot.at(-1)?.id).toBe("counted-append");
        expect(assembled.memoryBlock).not.toBeNull();

        const ops = 40;
        let total = 0;
        for (let i = 0; i < ops; i++) {
          count(() => history.append({ id: `op-${i}`, threadId, kind: "user", text: `op ${i}`, runKey: `run-op-${i}` }));
          let n = statements;
          statements = 0;
          await memory.afterAppend(threadId);
          memory.assemble(threadId);
          n += statements;
          total += n;
        }
        // Steady state 7 (2 + the plan's one read + 4); compaction's jobs, amortized over the appends that overflow the hot tier, add the rest.
        expect(total / ops).toBeLessThanOrEqual(10);
        expect(compaction.jobs().some((job) => job.status === "done")).toBe(true);
      } finally {
        sql.exec = exec;
      }
    });
  });
});
