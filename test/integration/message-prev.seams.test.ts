import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import type { Message } from "../../src/schema/agents/messages";
import { api, createAgent, createTenant } from "./helpers";
import { prng } from "../support/prng";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

type Read = Record<string, Message>;

/**
 * A message row stores its thread's previous message's id as its prev_message_id and its own run key in full.
 * Messages are appended into several threads in a random interleaving; an oracle keeps each thread's last id at every
 * append. Every reader (get, window, the run context's page, list by thread and across threads, event hydration,
 * export) must give each message the oracle's prevMessageId and what the append answered.
 */
describe("a message's prevMessageId is the previous message of its thread", () => {
  it("every reader gives the oracle's previous message and the run key, both stored in full", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id);
    const threads = [`${agent.id}:session:a`, `${agent.id}:session:b`, `${agent.id}:session:c`];

    const readAll = (instance: AgentDO, state: DurableObjectState): Record<string, Read> => {
      const { history } = instance.parts;
      const get: Read = {};
      const window: Read = {};
      const hot: Read = {};
      const byThread: Read = {};
      const across: Read = {};
      for (const thread of threads) {
        for (const m of history.window(thread, 1_000)) window[m.id] = m;
        // The run context's hot page: the newest ≤ 40.
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
      // The event log's own read path: its stored rows hydrated from the messages they refer to.
      const hydrated = instance.parts.events.listAfter(0, 10_000).filter((event) => event.type === "message.appended");
      const events: Read = {};
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
        appended[id] = message;
        last.set(thread, id);
      }
      // Stored: NULL for a thread's first message, the previous message's id for every other; the run key itself.
      const stored = state.storage.sql.exec<{ id: string; prev: string | null; run_key: string | null }>("SELECT id, prev_message_id AS prev, run_key FROM messages").toArray();
      for (const row of stored) expect(row.prev).toBe(oracle[row.id]);
      for (const row of stored) expect(row.run_key).toBe(runKeys[row.id]);
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
  });

});
