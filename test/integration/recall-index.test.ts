import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import { config } from "../../src/config";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { recallIndex } from "../../src/objects/agent/rows";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`)) as any;
const inDo = runInDurableObject as unknown as <T>(stub: unknown, fn: (instance: AgentDO, state: DurableObjectState) => T | Promise<T>) => Promise<T>;
const search = async (key: string, agentId: string, q: string) =>
  ((await api("GET", `/v1/agents/${agentId}/memory/search?q=${encodeURIComponent(q)}&limit=50`, { key })).body.data as Array<{ messageId: string }>).map((hit) => hit.messageId).sort();

async function setup() {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
  return { tenantId, key, agent, stub: agentDo(tenantId, agent.id) };
}

/** The index's newest seq and the messages' newest seq with text, read from the object's SQLite. */
const marks = (state: DurableObjectState) => ({
  indexed: state.storage.sql.exec<{ n: number }>("SELECT coalesce(max(id), 0) AS n FROM messages_fts_docsize").one().n,
  newest: state.storage.sql.exec<{ n: number }>("SELECT coalesce(max(seq), 0) AS n FROM messages WHERE text IS NOT NULL").one().n,
});

/**
 * The index is exact: FTS5's own check of its structure, the messages it holds are exactly those with text up to its
 * mark, and (rank 1: compared with the messages table, token by token) every one holds its row's current text — that
 * comparison expects an index entry for every row, so it runs only where every message has text.
 */
const integrityCheck = (state: DurableObjectState) => {
  const sql = state.storage.sql;
  sql.exec("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").toArray();
  const { indexed } = marks(state);
  const held = sql.exec<{ id: number }>("SELECT id FROM messages_fts_docsize ORDER BY id").toArray().map((row) => row.id);
  expect(held).toEqual(sql.exec<{ seq: number }>("SELECT seq FROM messages WHERE text IS NOT NULL AND seq <= ? ORDER BY seq", indexed).toArray().map((row) => row.seq));
  if (sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages WHERE text IS NULL").one().n === 0 && indexed === marks(state).newest) {
    sql.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)").toArray();
  }
};

/**
 * Recall's FTS5 index is filled lazily (migration 0012, rows/recall-index.ts): no trigger indexes an insert; a search
 * first indexes every message above the index's mark, and compaction indexes bounded batches.
 */
describe("recall index (lazy)", () => {
  it("a message appended just before a search is recalled, though the insert left it unindexed", async () => {
    const { key, agent, stub } = await setup();
    const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "the aardvark ate breakfast" } });
    await waitForRun(key, agent.id, first.body.runKey);
    expect((await search(key, agent.id, "aardvark")).length).toBeGreaterThan(0);

    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "a quokka appeared" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    // Appended, not yet indexed: only a search (or compaction) indexes.
    const before = await inDo(stub, (_instance, state) => marks(state));
    expect(before.indexed).toBeLessThan(before.newest);
    const hits = await search(key, agent.id, "quokka");
    const ids = await inDo(stub, (_instance, state) => state.storage.sql.exec<{ id: string }>("SELECT id FROM messages WHERE text LIKE '%quokka%'").toArray().map((row) => row.id).sort());
    expect(ids.length).toBeGreaterThan(0);
    expect(hits).toEqual(ids);
    await inDo(stub, (_instance, state) => {
      expect(marks(state).indexed).toBe(marks(state).newest);
      integrityCheck(state);
    });
  });

  it("deletes and text updates of indexed and unindexed rows keep the index exact", async () => {
    const { key, agent, stub } = await setup();
    await inDo(stub, (instance, state) => {
      const history = instance.parts.history;
      for (let i = 0; i < 6; i++) history.append({ id: `old-${i}`, threadId: i % 2 ? "a" : "b", kind: "user", text: `walrus old ${i}` });
      recallIndex(instance.parts.db).catchUp();
      for (let i = 0; i < 6; i++) history.append({ id: `new-${i}`, threadId: i % 2 ? "a" : "b", kind: "user", text: `walrus new ${i}` });
      history.append({ id: "no-text", threadId: "a", kind: "action", content: { x: 1 } });
      const { indexed, newest } = marks(state);
      expect(indexed).toBeLessThan(newest);
      // Thread "a" holds indexed and unindexed rows; both kinds go in one statement, then one of each is rewritten.
      state.storage.sql.exec("DELETE FROM messages WHERE thread_id = 'a'");
      state.storage.sql.exec("UPDATE messages SET text = 'narwhal renamed' WHERE id IN ('old-0', 'new-0')");
    });
    expect(await search(key, agent.id, "walrus")).toEqual(["new-2", "new-4", "old-2", "old-4"]);
    expect(await search(key, agent.id, "narwhal")).toEqual(["new-0", "old-0"]);
    await inDo(stub, (_instance, state) => integrityCheck(state));
  });

  it("compaction indexes what was appended since its last batch, summaries included", async () => {
    const { agent, stub } = await setup();
    await inDo(stub, async (instance, state) => {
      for (let i = 0; i < 60; i++) instance.parts.history.append({ id: `m-${i}`, threadId: "t", kind: i % 2 ? "assistant" : "user", text: `ibex message ${i} `.repeat(40) });
      expect(marks(state).indexed).toBe(0);
      const outcome = await instance.parts.compactor.runNow("t");
      expect(outcome.committed).toBeGreaterThan(0);
      expect(marks(state)).toEqual({ indexed: marks(state).newest, newest: marks(state).newest });
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM messages WHERE kind = 'summary'").one().n).toBeGreaterThan(0);
      integrityCheck(state);
    });
    expect(agent.id).toBeTruthy();
  });

  it("the retention pass indexes a bounded batch of threads that never compact, and says when more is left", async () => {
    const { stub } = await setup();
    await inDo(stub, (instance, state) => {
      // 600 short messages over many threads: none compacts, so only a search or the retention pass indexes them.
      for (let i = 0; i < 600; i++) instance.parts.history.append({ id: `s-${i}`, threadId: `visitor-${i % 50}`, kind: "user", text: `oryx ${i}` });
      expect(marks(state).indexed).toBe(0);
      const first = instance.parts.retention.prune(config.retention, Date.now());
      // One pass indexes at most its batch (500) and asks for the next pass soon, since more is left.
      expect(state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages_fts_docsize").one().n).toBe(config.retention.batchRows);
      expect(first.more).toBe(true);
      const second = instance.parts.retention.prune(config.retention, Date.now());
      expect(marks(state).indexed).toBe(marks(state).newest);
      expect(second.more).toBe(false);
      integrityCheck(state);
    });
  });

  it("migration 0012 keeps the rows the insert trigger indexed; the mark starts at their newest", async () => {
    const { key, agent, stub } = await setup();
    await inDo(stub, (instance, state) => {
      const sql = state.storage.sql;
      // The 0004 shape: the triggers that indexed every insert, over rows they indexed.
      for (const name of ["messages_fts_ad", "messages_fts_au"]) sql.exec(`DROP TRIGGER ${name}`);
      for (const statement of migrations.migrations.m0004.split("--> statement-breakpoint").slice(1, 5)) sql.exec(statement.replace(/^\s*--.*$/gm, "").trim());
      for (let i = 0; i < 5; i++) instance.parts.history.append({ id: `pre-${i}`, threadId: "t", kind: "user", text: `pelican before ${i}` });
      instance.parts.history.append({ id: "pre-null", threadId: "t", kind: "action", content: { y: 1 } });
      expect(marks(state).indexed).toBe(sql.exec<{ n: number }>("SELECT max(seq) AS n FROM messages WHERE id = 'pre-4'").one().n);
      for (const statement of migrations.migrations.m0012.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) sql.exec(text);
      }
      integrityCheck(state);
      instance.parts.history.append({ id: "post-0", threadId: "t", kind: "user", text: "pelican after" });
      expect(marks(state).indexed).toBeLessThan(marks(state).newest);
    });
    expect(await search(key, agent.id, "pelican")).toEqual(["post-0", "pre-0", "pre-1", "pre-2", "pre-3", "pre-4"]);
    await inDo(stub, (_instance, state) => integrityCheck(state));
  });
});
