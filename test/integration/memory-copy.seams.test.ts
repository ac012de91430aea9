import { runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONTEXT_BUDGET } from "../../src/core/memory/context-assembly";
import { emptySlots } from "../../src/core/memory/slots";
import * as schema from "../../src/db/agent-schema";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { benchMemory, MemoryContext, runBenchOp } from "../../src/objects/agent/memory";
import { memoryCopy, MemoryCopyStale, verifyMemoryCopy } from "../../src/objects/agent/rows";
import { agentDo, createAgent, createTenant } from "./helpers";

const NOW = Date.now();

/** With the test deployments' verification off: what the kept copy alone gives. */
function unverified<T>(fn: () => T): T {
  verifyMemoryCopy(false);
  try {
    return fn();
  } finally {
    verifyMemoryCopy(true);
  }
}

/**
 * Issue 12 §8 (session 12): the append + assemble op reads nothing that the agent object already knows — the hot page,
 * the summaries read (with slots and report heads) and the compaction planner's totals are kept in memory
 * (rows/memory-copy.ts). The copy is only worth keeping if it is exact, so after each kind of write this compares what
 * the kept copy gives with what the statements read afresh (the oracle: the copy dropped, the same statements run).
 */
describe("the memory copy (issue 12 §8, session 12)", () => {
  it("after every kind of write, the kept page, summaries read and planner totals equal a fresh read", { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO, state: DurableObjectState) => {
      const { db, history, memoryContext, compaction, profile, reports } = instance.parts;
      const copy = memoryCopy(db);
      let thread = "copy-oracle";
      let context = memoryContext;
      let limit = DEFAULT_CONTEXT_BUDGET.maxHotMessages;
      const read = () => ({
        inputs: (() => {
          const { inputs, rows } = context.inputs(thread, NOW);
          return { inputs, rows: [...rows.values()] };
        })(),
        // Below the hot tier's limits a plan plans nothing and only brings the totals up to date.
        planned: compaction.plan(thread),
        totals: { ...copy.totalsOf(thread) },
      });
      /** The kept copy's answer, then the fresh one; leaves the copy filled (by the fresh read) for the next write. */
      const check = (label: string, kept: { page: boolean; totals: boolean; summaries: boolean }) => {
        // What is still kept after the write (an update keeps, a drop does not): both paths are exercised below.
        expect({ page: copy.page(thread, limit) !== undefined, totals: copy.totalsOf(thread) !== undefined, summaries: copy.summariesRows("8:4") !== undefined }, label).toEqual(kept);
        const fromCopy = unverified(read);
        copy.forget();
        const fresh = unverified(read);
        expect(fromCopy, label).toEqual(fresh);
        return fresh;
      };
      const fill = () => unverified(read);

      history.append({ id: "m-0", threadId: thread, kind: "user", text: "hello", runKey: "r-1" });
      fill();
      // Plain appends: the page heads with the new row, stored '' links resolved as a read resolves them.
      history.append({ id: "m-1", threadId: thread, kind: "assistant", text: "hi there", runKey: "r-1" });
      check("same run key as the previous message (stored '')", { page: true, totals: true, summaries: true });
      history.append({
        id: "m-2",
        threadId: thread,
        kind: "observation",
        text: "naïve café — 漢字 🏃 runs",
        content: { data: { km: 12.5, tags: ["long", "ünïcode"] }, nested: [1, null, "x"] },
        metadata: { reason: "webhook", step: 3 },
        runKey: "r-2",
        authority: "external_evidence",
      });
      check("content, metadata, authority, non-ASCII text (tokens in UTF-8 bytes)", { page: true, totals: true, summaries: true });
      // A replayed id writes nothing and changes nothing.
      history.append({ id: "m-1", threadId: thread, kind: "assistant", text: "hi there", runKey: "r-1" });
      check("a replayed append", { page: true, totals: true, summaries: true });
      // SQLite stores a lone surrogate as U+FFFD: the appended row is not kept as given, the thread is read afresh.
      history.append({ id: "m-3", threadId: thread, kind: "user", text: "broken \ud800 pair" });
      check("a lone surrogate", { page: false, totals: false, summaries: true });
      for (let i = 4; i < 12; i++) history.append({ id: `m-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `turn ${i}`, runKey: `r-${i >> 1}` });
      check("appends", { page: true, totals: true, summaries: true });
      // Another thread's appends leave this thread's copy as it is.
      history.append({ id: "other-0", threadId: "copy-other", kind: "user", text: "elsewhere" });
      check("another thread's append", { page: true, totals: true, summaries: true });

      // Compaction: overflow the hot tier, then commit summaries (summaries, the thread's pointer, a summary message).
      for (let i = 12; i < 60; i++) history.append({ id: `m-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `turn ${i} `.repeat(20), runKey: `r-${i >> 1}` });
      const memory = benchMemory(memoryContext, compaction);
      while ((await memory.catchUp(thread)) > 0);
      expect(compaction.compactedThroughSeq(thread)).toBeGreaterThan(0);
      // Session 13: a commit trims the kept page to the moved pointer instead of dropping it (the plan after it re-reads the totals).
      const compacted = check("summary commits", { page: true, totals: true, summaries: false });
      expect(compacted.inputs.inputs.warmSummaries.length).toBeGreaterThan(0);
      // Appends after a summary message: their links point at it.
      history.append({ id: "m-after", threadId: thread, kind: "user", text: "after the summary", runKey: "r-after" });
      check("an append after compaction", { page: true, totals: true, summaries: true });

      // Slots (agent_state) and report heads ride with the summaries read.
      profile.writeSlots({ ...emptySlots(), primaryGoal: "Finish the marathon", primaryGoalVersion: 1 });
      expect(check("slots written", { page: true, totals: true, summaries: false }).inputs.inputs.slots?.primaryGoal).toBe("Finish the marathon");
      expect(reports.publish({ scope: "daily", periodKey: "2026-05-01", content: { text: "day one" } }, NOW).ok).toBe(true);
      expect(check("a report head moved", { page: true, totals: true, summaries: false }).inputs.inputs.report?.report.scope).toBe("daily");

      // The bench's bulk seed writes rows past History.append and drops the thread.
      const done = await runBenchOp(db, history, { op: "seed", threadId: thread, count: 3 }, memory, state.storage.sql);
      expect(done.ok).toBe(true);
      check("the bench's seed", { page: false, totals: false, summaries: true });

      // A context with a shorter page (the copy keys a page by its row limit): past its limit, the kept page drops
      // its oldest rows as the statement's LIMIT does.
      context = new MemoryContext(db, reports, () => agent.id, { ...DEFAULT_CONTEXT_BUDGET, maxHotMessages: 5 });
      limit = 5;
      thread = "copy-short";
      history.append({ id: "short-0", threadId: thread, kind: "user", text: "first" });
      fill();
      for (let i = 1; i < 9; i++) history.append({ id: `short-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `turn ${i}`, runKey: "r-short" });
      const trimmed = check("appends past the page's limit", { page: true, totals: true, summaries: true });
      expect(trimmed.inputs.rows.map((message) => message.id)).toEqual(["short-8", "short-7", "short-6", "short-5", "short-4"]);

      // A thread's first message (session 16): its page and totals are known from the insert, without a read; more
      // appends before the first read than the page holds are cut to the limit that read asks with.
      thread = "copy-new";
      history.append({ id: "new-0", threadId: thread, kind: "observation", text: "first of its thread", runKey: "r-new", authority: "external_evidence" });
      check("a thread's first message", { page: true, totals: true, summaries: true });
      thread = "copy-new-long";
      for (let i = 0; i < 7; i++) history.append({ id: `long-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `new ${i}`, runKey: "r-long" });
      const cut = check("a new thread past the page's limit before its first read", { page: true, totals: true, summaries: true });
      expect(cut.inputs.rows.map((message) => message.id)).toEqual(["long-6", "long-5", "long-4", "long-3", "long-2"]);
    });
  });

  it("a summary commit behind the thread's pointer (a replayed job) moves no pointer back and keeps the page as it is", { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const { db, history, memoryContext, compaction } = instance.parts;
      const copy = memoryCopy(db);
      const thread = "copy-replay";
      for (let i = 0; i < 140; i++) history.append({ id: `r-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `turn ${i}`, runKey: `r-${i >> 1}` });
      const memory = benchMemory(memoryContext, compaction);
      while ((await memory.catchUp(thread)) > 0);
      const done = compaction.jobs(50).filter((job) => job.status === "done" && job.summaryDepth === 0 && job.threadId === thread);
      expect(done.length).toBeGreaterThan(1);
      const oldest = done.reduce((a, b) => (a.coveredThroughSeq < b.coveredThroughSeq ? a : b));
      const pointer = compaction.compactedThroughSeq(thread);
      expect(oldest.coveredThroughSeq).toBeLessThan(pointer);
      const page = () => unverified(() => memoryContext.inputs(thread, NOW).inputs.hotMessages);
      const before = page();
      // The same summary again (same span, text and contract: "noop_same"), as a retried attempt would commit it.
      const text = history.get(oldest.summaryMessageId!)!.text!;
      const { summarizerContractVersion } = db.select().from(schema.summaries).where(eq(schema.summaries.messageId, oldest.summaryMessageId!)).get()!;
      const resolution = compaction.commit(oldest, { summarizer: "llm", summarizerContractVersion, text, reason: "replay" });
      expect(resolution.action).toBe("noop_same");
      expect(compaction.compactedThroughSeq(thread)).toBe(pointer);
      expect(copy.page(thread, DEFAULT_CONTEXT_BUDGET.maxHotMessages)).toBeDefined();
      expect(page()).toEqual(before);
      copy.forget();
      expect(page()).toEqual(before);
    });
  });

  it("a writer that does not drop the copy fails in test deployments: raw rows written past the copy are found stale", { timeout: 60_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO, state: DurableObjectState) => {
      const { db, history, memoryContext, compaction } = instance.parts;
      const thread = "copy-stale";
      history.append({ id: "s-0", threadId: thread, kind: "user", text: "hello" });
      memoryContext.assemble(thread);
      compaction.plan(thread);
      const sql = state.storage.sql;
      // A message written past History.append: the kept page and totals miss it.
      sql.exec("INSERT INTO messages (id, thread_id, kind, text, metadata, created_at) VALUES ('s-raw', ?, 'user', 'raw', '{}', '2026-01-01T00:00:00.000Z')", thread);
      expect(() => memoryContext.assemble(thread)).toThrow(MemoryCopyStale);
      expect(() => compaction.plan(thread)).toThrow(MemoryCopyStale);
      // Without the check the kept copy is what an assemble would use: the raw row is missing from it.
      expect(unverified(() => memoryContext.assemble(thread)).hot.map((message) => message.id)).toEqual(["s-0"]);
      memoryCopy(db).forgetThread(thread);
      expect(memoryContext.assemble(thread).hot.map((message) => message.id)).toEqual(["s-0", "s-raw"]);
      // The slots written past the profile: the kept summaries read is stale.
      sql.exec(`UPDATE agent_state SET slots = '{"primaryGoal":"raw"}'`);
      expect(() => memoryContext.assemble(thread)).toThrow(MemoryCopyStale);
      memoryCopy(db).forget();
      expect(memoryContext.inputs(thread).inputs.slots).toBeDefined();
    });
  });
});
