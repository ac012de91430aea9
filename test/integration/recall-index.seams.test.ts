import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import type { AgentDO } from "../../src/objects/agent/agent-do";
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
  it("retention keeps indexed messages recallable; an erasure takes the index with them", async () => {
    const { tenantId, key, agent, stub } = await setup();
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "the secret capybara" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const hits = await search(key, agent.id, "capybara");
    expect(hits.length).toBeGreaterThan(0);
    expect((await stub.pruneNow(Date.now() + 400 * 86_400_000)).ok).toBe(true);
    expect(await search(key, agent.id, "capybara")).toEqual(hits);

    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    expect((await stub.forceErasure()).ok).toBe(true);
    await inDo(stub, (_instance, state) => {
      // The schema is migrated again: the index is empty and no insert trigger came back.
      expect(marks(state)).toEqual({ indexed: 0, newest: 0 });
      const triggers = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").toArray().map((row) => row.name);
      expect(triggers).toEqual(["messages_fts_ad", "messages_fts_au"]);
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM messages_fts WHERE messages_fts MATCH 'capybara'").one().n).toBe(0);
      integrityCheck(state);
    });
    expect(tenantId).toBeTruthy();
  });
});
