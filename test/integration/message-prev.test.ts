import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { hydrateEvents } from "../../src/objects/agent/events";
import type { Message } from "../../src/schema/agents/messages";
import { api, createAgent, createTenant } from "./helpers";
import { prng } from "../support/prng";

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
  it("reads the oracle's previous message in every reader, for the new and the old stored form", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id);
    const threads = [`${agent.id}:session:a`, `${agent.id}:session:b`, `${agent.id}:session:c`];

    const readAll = (instance: AgentDO, state: DurableObjectState): Record<string, Read> => {
      const { history, db } = instance.parts;
      const get: Read = {};
      const window: Read = {};
      const hot: Read = {};
      const byThread: Read = {};
      const across: Read = {};
      for (const thread of threads) {
        for (const m of history.window(thread, 1_000)) window[m.id] = m;
        // The run context's hot page (its own resolution, message-row.ts ThreadPageResolver): the newest ≤ 40.
        for (const m of instance.parts.memoryContext.inputs(thread).rows.values()) hot[m.id] = m;
        let before: number | undefined;
        for (;;) {
          const page = history.list({ threadId: thread, beforeSeq: before, limit: 7 });
          for (const m of page.data) byThread[m.id] = m;
          if (page.lastSeq === null) break;
          before = page.lastSeq;
        }
      }
      let before: number | undefined;
      for (;;) {
        const page = history.list({ beforeSeq: before, limit: 5 });
        for (const m of page.data) {
          across[m.id] = m;
          get[m.id] = history.get(m.id)!;
        }
        if (page.lastSeq === null) break;
        before = page.lastSeq;
      }
      const rows = state.storage.sql
        .exec<{ seq: number; type: string; run_key: string | null; data: string; created_at: string }>(
          `SELECT events.seq + item.key AS seq, item.value ->> '$[0]' AS type, run_key, item.value -> '$[2]' AS data, item.value ->> '$[1]' AS created_at
           FROM events, json_each(events.items) AS item WHERE item.value ->> '$[0]' = 'message.appended' ORDER BY events.seq, item.key`,
        )
        .toArray();
      const events: Read = {};
      const hydrated = hydrateEvents(
        db,
        agent.id,
        rows.map((r) => ({ seq: r.seq, type: r.type, runKey: r.run_key, data: JSON.parse(r.data), createdAt: r.created_at })),
      );
      for (const event of hydrated) {
        const m = (event.data as { message: Message }).message;
        events[m.id] = m;
      }
      return { get, window, byThread, across, events, hot };
    };

    const { oracle, runKeys, appended, first } = await runInDurableObject(stub, (instance: AgentDO, state) => {
      const random = prng(12);
      const last = new Map<string, string>();
      const oracle: Record<string, string | null> = {};
      const runKeys: Record<string, string | null> = {};
      const storedRunKey: Record<string, string | null> = {};
      const appended: Read = {};
      for (let i = 0; i < 60; i++) {
        const thread = threads[Math.floor(random() * threads.length)]!;
        const id = `m-${i}-${Math.floor(random() * 1e9).toString(36)}`;
        // Run keys: none, a fresh one, or the thread's previous message's (a reply after its input).
        const pick = random();
        const runKey = pick < 0.2 ? null : pick < 0.6 ? `run-${i}` : (runKeys[last.get(thread) ?? ""] ?? `run-${i}`);
        const { message } = instance.parts.history.append({ id, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `message ${i}`, runKey, metadata: i % 3 ? {} : { step: 0, final: true } });
        oracle[id] = last.get(thread) ?? null;
        runKeys[id] = runKey;
        storedRunKey[id] = runKey !== null && oracle[id] !== null && runKeys[oracle[id]!] === runKey && storedRunKey[oracle[id]!] !== "" ? "" : runKey;
        appended[id] = message;
        last.set(thread, id);
      }
      // Stored: NULL for a thread's first message, '' for every other (nothing else).
      const stored = state.storage.sql.exec<{ id: string; prev: string | null; run_key: string | null }>("SELECT id, prev_message_id AS prev, run_key FROM messages").toArray();
      for (const row of stored) expect(row.prev).toBe(oracle[row.id] === null ? null : "");
      // run_key: '' where the thread's previous message stored the same key in full, else the key.
      for (const row of stored) expect(row.run_key).toBe(storedRunKey[row.id]);
      expect(stored.filter((row) => row.run_key === "").length).toBeGreaterThan(3);
      for (const m of Object.values(appended)) expect(m.metadata.runKey).toBe(runKeys[m.id] ?? undefined);
      return { oracle, runKeys, appended, first: readAll(instance, state) };
    });

    expect(Object.keys(appended)).toHaveLength(60);
    for (const [name, read] of Object.entries(first)) {
      // The hot page holds each thread's newest ≤ 40 messages (nothing is compacted here); every other reader all 60.
      const perThread = threads.map((thread) => Object.values(appended).filter((m) => m.threadId === thread).length);
      if (name === "hot") expect(Object.keys(read).length).toBe(perThread.reduce((n, count) => n + Math.min(40, count), 0));
      else expect(Object.keys(read).sort(), name).toEqual(Object.keys(oracle).sort());
      for (const [id, message] of Object.entries(read)) {
        expect(message.metadata.prevMessageId, `${name} ${id}`).toBe(oracle[id]);
        // What append answered is what every reader answers (key order included).
        expect(JSON.stringify(message), `${name} ${id}`).toBe(JSON.stringify(appended[id]));
      }
    }

    const exported = async () => {
      const res = await api("GET", `/v1/agents/${agent.id}/export`, { key });
      expect(res.status).toBe(200);
      return (res.body.messages as Array<Message & { seq: number }>).filter((m) => m.id in oracle);
    };
    const exportNew = await exported();
    expect(exportNew).toHaveLength(60);
    for (const m of exportNew) expect(m.metadata.prevMessageId).toBe(oracle[m.id]);

    // The form stored before session 7: the previous message's id itself, in every row.
    const second = await runInDurableObject(stub, (instance: AgentDO, state) => {
      for (const [id, prev] of Object.entries(oracle)) state.storage.sql.exec("UPDATE messages SET prev_message_id = ?, run_key = ? WHERE id = ?", prev, runKeys[id], id);
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM messages WHERE prev_message_id = '' OR run_key = ''").one().n).toBe(0);
      return readAll(instance, state);
    });
    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(await exported()).toEqual(exportNew);
  });

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
