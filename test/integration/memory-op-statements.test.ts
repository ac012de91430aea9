import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { benchMemory } from "../../src/objects/agent/memory";
import { agentDo, createAgent, createTenant } from "./helpers";
import { emptySlots, parseSlots } from "../../src/core/memory/slots";

/**
 * The append + assemble op's cost is mostly its SQLite statements, so their number is bounded here on a real agent
 * (no timing). The op is the bench's (`bench/history.mjs`): append a message, plan (and work off) compaction as a run
 * does after it, assemble the run context. Every read goes to SQLite (no copy is kept), each on an index with a
 * LIMIT; the bounds are what it runs, so a statement added to the path fails this test.
 */
const APPEND = 5;
const PLAN = 2;
const ASSEMBLE = 6;
// Measured 15.25: the appends and assembles of the op, and the summary commits and plans of the jobs it overflows into.
const OP = 16;

describe("append + assemble statements", () => {
  it(`an append is ${APPEND} statements, a plan ${PLAN}, an assemble ${ASSEMBLE}, the op ≤ ${OP} on average with compaction`, { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO, state: DurableObjectState) => {
      const { history, memoryContext, compaction } = instance.parts;
      const memory = benchMemory(memoryContext, compaction);
      const threadId = "statement-count";
      // A thread with summaries (warm, and between hot rows), caught up as a steady agent is.
      for (let i = 0; i < 120; i++) history.append({ id: `seed-${i}`, threadId, kind: i % 2 ? "assistant" : "user", text: `seed ${i}`, runKey: `run-${i >> 1}` });
      while ((await memory.catchUp(threadId)) > 0);
      expect(compaction.compactedThroughSeq(threadId)).toBeGreaterThan(0);
      // The event forwarder reads the inbox on an event unless a flush is already scheduled (events/forwarder.ts): a
      // flush still under way from the agent's creation made the first counted append 3 statements now and then. Once
      // it is idle, one uncounted append schedules the next flush, which no timer runs before the synchronous counts.
      const { forwarder } = instance.parts;
      while (!forwarder.idle) await new Promise((resolve) => setTimeout(resolve, 5));
      history.append({ id: "forwarder-scheduled", threadId, kind: "user", text: "uncounted" });
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
        expect(statements).toBe(APPEND);
        count(() => compaction.plan(threadId));
        expect(statements).toBe(PLAN);
        const assembled = count(() => memoryContext.assemble(threadId));
        expect(statements).toBe(ASSEMBLE);
        // The assemble read what it should: the appended message last, summaries in the memory block.
        expect(assembled.hot.at(-1)?.id).toBe("counted-append");
        expect(assembled.memoryBlock).not.toBeNull();
        // The next append shows in the next assemble (read from SQLite, nothing kept in between).
        count(() => history.append({ id: "counted-append-2", threadId, kind: "assistant", text: "counted too", runKey: "run-counted" }));
        const again = count(() => memoryContext.assemble(threadId));
        expect(again.hot.slice(-2).map((message) => message.id)).toEqual(["counted-append", "counted-append-2"]);
        expect(again.memoryBlock).toBe(assembled.memoryBlock);

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
        // Compaction's jobs, amortized over the appends that overflow the hot tier, add to the append, plan and assemble.
        expect(total / ops).toBeLessThanOrEqual(OP);
        expect(compaction.jobs().some((job) => job.status === "done")).toBe(true);
      } finally {
        sql.exec = exec;
      }
    });
  });

  it("the context's slots and report come from its one summaries read exactly as the profile and the heads table give them", { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const { history, memoryContext, profile, reports } = instance.parts;
      const threadId = "extras";
      history.append({ id: "extras-1", threadId, kind: "user", text: "hello" });
      const direct = () => ({ slots: parseSlots(profile.state()?.slots ?? {}), report: reports.firstHead(["current", "daily", "weekly", "monthly"], 1_000) });
      const merged = () => memoryContext.inputs(threadId, 1_000).inputs;
      // Nothing written yet: no slots, no report (and the slots read as empty, not as missing).
      expect(merged().slots).toEqual(emptySlots());
      expect(merged().report).toBeNull();
      // Written: each change shows in the next context (a cached copy would not), equal to the direct reads.
      profile.writeSlots({ ...emptySlots(), primaryGoal: "Finish the marathon", primaryGoalVersion: 1, openLoopIds: ["loop-1"], openLoopIdsVersion: 1 });
      const slots = direct().slots;
      expect(slots.ok && merged().slots).toEqual(slots.ok ? slots.slots : null);
      expect(merged().slots?.primaryGoal).toBe("Finish the marathon");
      expect(reports.publish({ scope: "daily", periodKey: "2026-05-01", content: { text: "day one" } }, 500).ok).toBe(true);
      expect(merged().report?.report.id).toBe(direct().report?.report.id);
      expect(merged().report).toEqual({ report: direct().report!.report, fresh: direct().report!.freshness.fresh });
      // A narrower scope first in the context's order wins once it has a head.
      expect(reports.publish({ scope: "current", content: { text: "now" } }, 600).ok).toBe(true);
      expect(merged().report?.report.scope).toBe("current");
      expect(merged().report?.report.id).toBe(direct().report?.report.id);
    });
  });
});
