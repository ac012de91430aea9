import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { summaryId } from "../../src/core/memory/summary";
import { threadIds } from "../../src/core/ids/run-keys";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { agentDo, api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

/** Far in the future, so no real DO alarm armed for a retry can fire while the test runs. */
const T0 = Date.now() + 10 * 86_400_000;

async function setup(model = "builtin:echo") {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, { kind: "coach", model });
  return { tenantId, key, agent, stub: agentDo(tenantId, agent.id) as any };
}

/** Appends `count` alternating user/assistant messages through History (FTS triggers and prev links as in production). */
async function seed(tenantId: string, agentId: string, threadId: string, count: number, text = (i: number) => `message ${i}: we planned run number ${i} at the track.`) {
  await runInDurableObject(agentDo(tenantId, agentId), async (instance: AgentDO) => {
    const history = instance.parts.history;
    for (let i = 0; i < count; i++) history.append({ id: `${threadId}-${i}`, threadId, kind: i % 2 ? "assistant" : "user", text: text(i) });
  });
}

function sql<T = any>(instance: AgentDO, query: string, ...args: unknown[]): T[] {
  return (instance as any).ctx.storage.sql.exec(query, ...args).toArray() as T[];
}

describe("compaction: tiers, jobs, pointers", () => {
  it("an overflowing thread is summarized oldest-first into linked summary messages; raw rows stay; pointers advance after commit", async () => {
    const { tenantId, agent, stub } = await setup();
    const thread = "t-long";
    await seed(tenantId, agent.id, thread, 120);
    const outcome = await stub.compactNow(thread, T0);
    expect(outcome).toMatchObject({ ok: true, failed: 0 });
    expect(outcome.committed).toBeGreaterThanOrEqual(2);

    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const raw = sql(instance, "SELECT count(*) AS n FROM messages WHERE thread_id = ? AND kind != 'summary'", thread)[0].n;
      expect(raw).toBe(120); // never deleted
      const summaries = sql(instance, "SELECT * FROM summaries WHERE thread_id = ? ORDER BY seq", thread);
      expect(summaries.length).toBe(outcome.committed);
      // Spans are contiguous, oldest first, and link to real start/end messages.
      expect(summaries[0].start_message_id).toBe(`${thread}-0`);
      for (let i = 1; i < summaries.length; i++) expect(summaries[i].covered_from_seq).toBe(summaries[i - 1].covered_through_seq + 1);
      const pointer = sql(instance, "SELECT * FROM thread_memory WHERE thread_id = ?", thread)[0];
      expect(pointer.compacted_through_seq).toBe(summaries.at(-1).covered_through_seq);
      const hot = sql(instance, "SELECT count(*) AS n FROM messages WHERE thread_id = ? AND kind != 'summary' AND seq > ?", thread, pointer.compacted_through_seq)[0].n;
      expect(hot).toBeLessThanOrEqual(40);
      expect(hot).toBeGreaterThanOrEqual(1);
      // The summary message: deterministic id H(span, contract), kind summary, span in metadata.
      const first = summaries[0];
      const message = sql(instance, "SELECT * FROM messages WHERE id = ?", first.message_id)[0];
      expect(message.kind).toBe("summary");
      // Stored lean (the span is the summaries row's, issue 12 §6); every reader sees it whole.
      expect(JSON.parse(message.metadata)).toMatchObject({ "~": 1, summarizer: "llm" });
      const metadata = instance.parts.history.get(first.message_id)!.metadata;
      expect(metadata).toMatchObject({ summaryDepth: 0, summaryStartMessageId: `${thread}-0`, summarizerContractVersion: "summary.llm.v1", summarizer: "llm" });
      expect(first.message_id).toBe(
        summaryId({ agentId: agent.id, threadId: thread, startMessageId: first.start_message_id, endMessageId: first.end_message_id, summaryDepth: 0 }, "summary.llm.v1"),
      );
      expect(message.text).toContain("Summary (builtin model)");
      const state = sql(instance, "SELECT latest_summary_message_id AS id FROM agent_state")[0];
      expect(state.id).toBe(summaries.at(-1).message_id);
      const jobs = sql(instance, "SELECT status, summary_message_id FROM compaction_jobs WHERE thread_id = ?", thread);
      expect(jobs.every((job) => job.status === "done" && job.summary_message_id)).toBe(true);
    });

    // A second pass over the same history plans nothing new: the hot tier is within bounds.
    expect(await stub.compactNow(thread, T0)).toMatchObject({ ok: true, committed: 0, failed: 0 });
  });

  it("planning after each append (running totals) plans exactly when the hot tier overflows, and recounts when rows vanish", async () => {
    const { tenantId, agent } = await setup();
    const thread = "t-totals";
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const { history, compaction } = instance.parts;
      const append = (i: number) => history.append({ id: `${thread}-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `short ${i}` });
      // hotMaxMessages is 40: the first 40 appends plan nothing, the 41st plans one job.
      const planned: number[] = [];
      for (let i = 0; i < 41; i++) {
        append(i);
        planned.push(compaction.plan(thread));
      }
      expect(planned.slice(0, 40).every((n) => n === 0)).toBe(true);
      expect(planned[40]).toBe(1);
      expect(sql(instance, "SELECT count(*) AS n FROM compaction_jobs WHERE thread_id = ?", thread)[0].n).toBe(1);
      // Rows gone from under the totals (as an erasure does: seqs restart) while 30 short ones are counted; then
      // 800-byte messages (204 tokens each): the hot tier overflows on tokens at the 30th (6 120 > 6 000), which
      // totals still counting the vanished short rows would miss.
      const wipe = () => {
        sql(instance, "DELETE FROM compaction_jobs");
        sql(instance, "DELETE FROM messages WHERE thread_id = ?", thread);
        sql(instance, "DELETE FROM sqlite_sequence WHERE name = 'messages'");
      };
      wipe();
      for (let i = 0; i < 30; i++) {
        append(100 + i);
        expect(compaction.plan(thread)).toBe(0);
      }
      wipe();
      const again: number[] = [];
      for (let i = 0; i < 30; i++) {
        history.append({ id: `${thread}-long-${i}`, threadId: thread, kind: "user", text: "x".repeat(800) });
        again.push(compaction.plan(thread));
      }
      expect(sql(instance, "SELECT min(seq) AS seq FROM messages WHERE thread_id = ?", thread)[0].seq).toBe(1);
      expect(again.slice(0, 29).every((n) => n === 0)).toBe(true);
      expect(again[29]).toBe(1);
    });
  });

  it("replaying a commit is a no-op; divergent content under the same summaryId is a diagnostic, never applied, pointers stay", async () => {
    const { tenantId, agent, stub } = await setup();
    const thread = "t-diverge";
    await seed(tenantId, agent.id, thread, 60);
    await stub.compactNow(thread, T0);
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const compaction = instance.parts.compaction;
      const job = sql(instance, "SELECT * FROM compaction_jobs WHERE thread_id = ? AND summary_depth = 0 ORDER BY start_seq LIMIT 1", thread)[0];
      const row = { ...job, agentId: job.agent_id, threadId: job.thread_id, startMessageId: job.start_message_id, endMessageId: job.end_message_id, summaryDepth: 0, startSeq: job.start_seq, endSeq: job.end_seq, coveredFromSeq: job.covered_from_seq, coveredThroughSeq: job.covered_through_seq };
      const stored = sql(instance, "SELECT text FROM messages WHERE id = ?", job.summary_message_id)[0].text;
      const before = { state: sql(instance, "SELECT latest_summary_message_id AS id FROM agent_state")[0].id, thread: sql(instance, "SELECT * FROM thread_memory WHERE thread_id = ?", thread)[0], messages: sql(instance, "SELECT count(*) AS n FROM messages")[0].n };

      const same = compaction.commit(row, { summarizer: "llm", summarizerContractVersion: "summary.llm.v1", text: `  ${stored}\n`, reason: "replay" });
      expect(same).toEqual({ action: "noop_same", summaryId: job.summary_message_id });
      const divergent = compaction.commit(row, { summarizer: "llm", summarizerContractVersion: "summary.llm.v1", text: "a different summary of the same span", reason: "replica" });
      expect(divergent.action).toBe("divergent_duplicate");
      expect((divergent as { diagnostic?: unknown }).diagnostic).toMatchObject({ code: "summary_content_divergent", summaryId: job.summary_message_id });

      expect(sql(instance, "SELECT text FROM messages WHERE id = ?", job.summary_message_id)[0].text).toBe(stored);
      expect(sql(instance, "SELECT count(*) AS n FROM messages")[0].n).toBe(before.messages);
      expect(sql(instance, "SELECT latest_summary_message_id AS id FROM agent_state")[0].id).toBe(before.state);
      expect(sql(instance, "SELECT * FROM thread_memory WHERE thread_id = ?", thread)[0]).toEqual(before.thread);
      const diagnostics = sql(instance, "SELECT * FROM memory_diagnostics");
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]).toMatchObject({ code: "summary_content_divergent", summary_id: job.summary_message_id });
      // Another contract version is another id: no collision with the LLM summary of the same span.
      const extractive = compaction.commit(row, { summarizer: "extractive", summarizerContractVersion: "summary.extractive.v1", text: "extractive text", reason: "test" });
      expect(extractive.action).toBe("insert");
      expect(sql(instance, "SELECT latest_summary_message_id AS id FROM agent_state")[0].id).toBe(before.state); // older coverage: pointer not moved back
    });
  });

  it("failures retry with bounded exponential backoff, end failed_terminal, never move pointers; a manual retry then commits", async () => {
    const { tenantId, key, agent, stub } = await setup();
    const thread = "t-fail";
    await seed(tenantId, agent.id, thread, 50);
    expect(await stub.armFault("compaction.summarize", 5)).toBe(true);
    const delays: number[] = [];
    let now = T0;
    const first = await stub.compactNow(thread, now);
    expect(first).toMatchObject({ committed: 0, failed: 1 });
    delays.push(first.nextAttemptAt - now);
    expect(await stub.compactNow(null, first.nextAttemptAt - 1)).toMatchObject({ committed: 0, failed: 0 }); // not due yet
    for (let attempt = 2; attempt <= 5; attempt++) {
      const at: number = (await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => sql(instance, "SELECT next_attempt_at AS at FROM compaction_jobs")[0].at)) as number;
      now = at;
      const outcome = await stub.compactNow(null, now);
      expect(outcome.failed).toBe(1);
      if (attempt < 5) delays.push(outcome.nextAttemptAt - now);
    }
    expect(delays).toEqual([30_000, 60_000, 120_000, 240_000]);
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const job = sql(instance, "SELECT * FROM compaction_jobs")[0];
      expect(job).toMatchObject({ status: "failed_terminal", attempt_count: 5, next_attempt_at: null });
      expect(job.last_error).toContain("compaction.summarize");
      expect(sql(instance, "SELECT count(*) AS n FROM summaries")[0].n).toBe(0);
      expect(sql(instance, "SELECT count(*) AS n FROM thread_memory")[0].n).toBe(0);
      expect(sql(instance, "SELECT latest_summary_message_id AS id FROM agent_state")[0].id).toBeNull();
      // Terminal: the single-flight slot of the thread is free again, but the same span is never re-admitted by planning.
      expect(instance.parts.compaction.plan(thread)).toBe(0);
    });
    expect((await api("GET", `/v1/agents/${agent.id}/memory`, { key })).body.compaction).toMatchObject({ failedTerminal: 1, done: 0 });
    const retry = await api("POST", `/v1/agents/${agent.id}/memory/compaction/retry`, { key });
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ requeued: 1 });
    const after = await eventually(async () => {
      const memory = (await api("GET", `/v1/agents/${agent.id}/memory`, { key })).body;
      return memory.compaction.done === 1 ? memory : undefined;
    });
    expect(after.compaction).toMatchObject({ failedTerminal: 0, pending: 0, latestSummaryMessageId: expect.any(String) });
    expect((await api("POST", `/v1/agents/${agent.id}/memory/compaction/retry`, { key })).body).toEqual({ requeued: 0 });
  });

  it("after the retry threshold the extractive fallback commits under its own contract version", async () => {
    const { tenantId, agent, stub } = await setup();
    const thread = "t-fallback";
    await seed(tenantId, agent.id, thread, 50);
    await stub.armFault("compaction.beforeCommit", 2);
    let now = T0;
    await stub.compactNow(thread, now);
    for (let i = 0; i < 2; i++) {
      now = (await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => sql(instance, "SELECT next_attempt_at AS at FROM compaction_jobs")[0].at)) as number;
      await stub.compactNow(null, now);
    }
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const job = sql(instance, "SELECT * FROM compaction_jobs")[0];
      expect(job).toMatchObject({ status: "done", attempt_count: 3, summarizer: "extractive" });
      const message = sql(instance, "SELECT text, metadata FROM messages WHERE id = ?", job.summary_message_id)[0];
      expect(instance.parts.history.get(job.summary_message_id)!.metadata).toMatchObject({ summarizerContractVersion: "summary.extractive.v1", summarizerReason: "retry_threshold" });
      expect(message.text).toMatch(/^Extractive summary of \d+ item\(s\):/);
    });
  });

  it("summaries of summaries form the cold tier on the agent's memory thread; the pointer only ever moves forward", async () => {
    const { tenantId, agent, stub } = await setup();
    const thread = "t-cold";
    await seed(tenantId, agent.id, thread, 700);
    const coverage: number[] = [];
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const compaction = instance.parts.compaction;
      compaction.clock = () => T0;
      compaction.plan(thread);
      for (let i = 0; i < 100; i++) {
        const step = await compaction.pump(1);
        const pointer = sql(instance, "SELECT s.covered_through_seq AS c, s.summary_depth AS d FROM agent_state a JOIN summaries s ON s.message_id = a.latest_summary_message_id")[0];
        if (pointer) coverage.push(pointer.c);
        if (step.committed === 0) break;
      }
      compaction.clock = null;
      const depths = sql(instance, "SELECT summary_depth AS d, count(*) AS n FROM summaries GROUP BY summary_depth ORDER BY d");
      expect(depths.map((row) => row.d)).toEqual([0, 1]);
      const cold = sql(instance, "SELECT * FROM summaries WHERE summary_depth = 1")[0];
      expect(cold.thread_id).toBe(`${agent.id}:memory`);
      const children = sql(instance, "SELECT * FROM summaries WHERE condensed_into = ? ORDER BY seq", cold.message_id);
      expect(children).toHaveLength(4);
      expect(cold.start_message_id).toBe(children[0].message_id);
      expect(cold.end_message_id).toBe(children[3].message_id);
      expect(cold.covered_from_seq).toBe(children[0].covered_from_seq);
      expect(cold.covered_through_seq).toBe(children[3].covered_through_seq);
      expect(sql(instance, "SELECT count(*) AS n FROM summaries WHERE summary_depth = 0 AND condensed_into IS NULL")[0].n).toBeLessThanOrEqual(8);
    });
    expect(coverage.length).toBeGreaterThan(10);
    for (let i = 1; i < coverage.length; i++) expect(coverage[i]).toBeGreaterThanOrEqual(coverage[i - 1]!);
  });
});

describe("compaction in the agent's life", () => {
  it("runs after a completed run, off the reply path; recall ranks summary messages; export carries summaries and jobs", async () => {
    const { tenantId, key, agent } = await setup();
    const thread = threadIds.interactive(agent.id, "default");
    await seed(tenantId, agent.id, thread, 60, (i) => (i === 3 ? "the marathon in Valencia is on the first Sunday of December" : `small talk ${i}`));
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "what was the plan?" } });
    expect(sent.status).toBe(202);
    expect((await waitForRun(key, agent.id, sent.body.runKey)).status).toBe("completed");
    const memory = await eventually(async () => {
      const res = await api("GET", `/v1/agents/${agent.id}/memory`, { key });
      return res.body.counts.summaries > 0 ? res.body : undefined;
    });
    expect(memory.compaction).toMatchObject({ failedTerminal: 0 });
    expect(memory.compaction.latestSummaryMessageId).toEqual(expect.any(String));

    const hits = (await api("GET", `/v1/agents/${agent.id}/memory/search?q=${encodeURIComponent("marathon valencia december")}`, { key })).body.data;
    expect(hits.map((hit: any) => hit.kind)).toContain("summary");
    expect(hits.map((hit: any) => hit.messageId)).toContain(`${thread}-3`);

    const exported = await api("GET", `/v1/agents/${agent.id}/export`, { key });
    expect(exported.status).toBe(200);
    expect(exported.body.summaries.length).toBeGreaterThan(0);
    expect(exported.body.compactionJobs.length).toBe(exported.body.summaries.length);
    expect(exported.body.compactionJobs[0]).toMatchObject({ status: "done", threadId: thread });
    expect(exported.body.messages.filter((m: any) => m.kind === "summary").length).toBe(exported.body.summaries.length);
    expect(exported.body.messages.filter((m: any) => m.threadId === thread && m.kind !== "summary").length).toBe(62);
  });
});
