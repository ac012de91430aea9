import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import type { Message } from "../../src/schema/agents/messages";
import { api, createAgent, createTenant } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

type Read = Record<string, Message>;

/**
 * Issue 12 §6 (session 7): a message row stores '' as its prev_message_id when it is the thread's previous message by
 * seq, and '' as its run_key when it is that message's (stored in full); readers resolve both. Messages are appended into several threads in a random interleaving; an oracle keeps
 * each thread's last id at every append. Every reader (get, window, list by thread and across threads, event
 * hydration, export) must give each message the oracle's prevMessageId — and the same records again once the rows are
 * rewritten to the form stored before (the ids and run keys themselves).
 */
describe("a message's prevMessageId and runKey stored as 'those of the previous message of its thread'", () => {
  it("a summary message's span stored once, in its summaries row: every reader restores it, old rows read the same", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key, { kind: "coach" });
    const stub = agentDo(tenantId, agent.id) as any;
    const thread = "t-summaries";
    await runInDurableObject(stub, (instance: AgentDO) => {
      for (let i = 0; i < 120; i++) instance.parts.history.append({ id: `${thread}-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `message ${i}: we planned run number ${i} at the track.` });
    });
    const outcome = await stub.compactNow(thread, Date.now() + 10 * 86_400_000);
    expect(outcome.committed).toBeGreaterThanOrEqual(2);

    const readSummaries = () =>
      runInDurableObject(stub, (instance: AgentDO) => {
        const listed = instance.parts.history.list({ threadId: thread, limit: 500 }).data.filter((m) => m.kind === "summary");
        return { listed, got: listed.map((m) => instance.parts.history.get(m.id)) };
      });
    const spans = await runInDurableObject(stub, (_instance: AgentDO, state) =>
      state.storage.sql.exec<Record<string, any>>("SELECT s.*, m.metadata AS stored FROM summaries s JOIN messages m ON m.id = s.message_id ORDER BY s.seq").toArray(),
    );
    const lean = await readSummaries();
    expect(lean.listed).toHaveLength(spans.length);
    for (const span of spans) {
      expect(JSON.parse(span.stored)).not.toHaveProperty("summaryContentHash");
      const message = lean.listed.find((m) => m.id === span.message_id)!;
      // Oracle: the summaries row's columns, first and in the order the commit wrote them.
      expect(Object.keys(message.metadata).slice(0, 7)).toEqual(["summaryDepth", "summaryStartMessageId", "summaryEndMessageId", "coveredFromSeq", "coveredThroughSeq", "summaryContentHash", "summarizerContractVersion"]);
      expect(message.metadata).toMatchObject({
        summaryDepth: span.summary_depth,
        summaryStartMessageId: span.start_message_id,
        summaryEndMessageId: span.end_message_id,
        coveredFromSeq: span.covered_from_seq,
        coveredThroughSeq: span.covered_through_seq,
        summaryContentHash: span.summary_content_hash,
        summarizerContractVersion: span.summarizer_contract_version,
      });
      expect(lean.got[lean.listed.indexOf(message)]).toEqual(message);
    }
    // Messages appended after the summaries follow a summary message in their thread: the hot page resolves them
    // (ThreadPageResolver) as every other reader does.
    await runInDurableObject(stub, (instance: AgentDO) => {
      for (let i = 0; i < 3; i++) instance.parts.history.append({ id: `${thread}-after-${i}`, threadId: thread, kind: "user", text: `after ${i}`, runKey: `after-${i}` });
      const hot = [...instance.parts.memoryContext.inputs(thread).rows.values()];
      expect(hot.map((m) => m.id)).toEqual(expect.arrayContaining([`${thread}-after-0`, `${thread}-after-2`]));
      const afterSummary = hot.find((m) => m.id === `${thread}-after-0`)!;
      expect(instance.parts.history.get(afterSummary.metadata.prevMessageId as string)!.kind).toBe("summary");
      for (const m of hot) expect(JSON.stringify(m)).toBe(JSON.stringify(instance.parts.history.get(m.id)));
    });
    const exportedSummaries = async () => ((await api("GET", `/v1/agents/${agent.id}/export`, { key })).body.messages as Message[]).filter((m) => m.kind === "summary");
    const exportLean = await exportedSummaries();
    expect(exportLean).toHaveLength(spans.length);

    // The form stored before session 7: the whole metadata in the message row.
    await runInDurableObject(stub, (_instance: AgentDO, state) => {
      for (const message of lean.listed) {
        const { prevMessageId: _prev, ...whole } = message.metadata;
        state.storage.sql.exec("UPDATE messages SET metadata = ? WHERE id = ?", JSON.stringify(whole), message.id);
      }
    });
    const whole = await readSummaries();
    expect(JSON.stringify(whole)).toBe(JSON.stringify(lean));
    expect(await exportedSummaries()).toEqual(exportLean);
  });
});
