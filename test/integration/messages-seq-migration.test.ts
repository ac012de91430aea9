import { describe, expect, it } from "vitest";
import migrations from "../../migrations/agent";
import { agentDo, api, createAgent, createTenant, inDo, waitForRun } from "./helpers";

const OLD_SHAPE = [
  "CREATE TABLE `messages_old` (`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL, `id` text NOT NULL, `thread_id` text NOT NULL, `kind` text NOT NULL, `text` text, `content` text, `prev_message_id` text, `run_key` text, `authority` text, `metadata` text NOT NULL, `created_at` text NOT NULL)",
  "INSERT INTO `messages_old` SELECT * FROM `messages`",
  "DROP TABLE `messages`",
  "ALTER TABLE `messages_old` RENAME TO `messages`",
  "CREATE UNIQUE INDEX `messages_id` ON `messages` (`id`)",
  "CREATE INDEX `messages_thread_seq` ON `messages` (`thread_id`,`seq`)",
];

const search = async (key: string, agentId: string, q: string) => (await api("GET", `/v1/agents/${agentId}/memory/search?q=${q}`, { key })).body.data.map((hit: any) => hit.text);
const history = async (key: string, agentId: string) => (await api("GET", `/v1/agents/${agentId}/messages?sessionId=default&limit=50`, { key })).body.data;

/**
 * Migration 0014 rebuilds `messages` with a plain rowid key (no AUTOINCREMENT). An agent's messages from before it keep
 * their seqs and read the same, recall finds what it indexed before and after, and an insert no longer writes the
 * table's sqlite_sequence row.
 */
describe("migration 0014: messages without AUTOINCREMENT", () => {
  it("keeps every message, its seq and recall, and a later insert writes one row and its two index entries", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const first = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "zebra crossing before" } });
    await waitForRun(key, agent.id, first.body.runKey);
    expect(await search(key, agent.id, "zebra")).toHaveLength(2); // the message and its echo, indexed by the search
    const stub = agentDo(tenantId, agent.id);
    const seqsBefore = await inDo(stub, (_instance, state) => {
      for (const statement of OLD_SHAPE) state.storage.sql.exec(statement);
      return state.storage.sql.exec<{ seq: number; id: string }>("SELECT seq, id FROM messages ORDER BY seq").toArray();
    });
    const listedBefore = await history(key, agent.id);

    await inDo(stub, (_instance, state) => {
      for (const statement of migrations.migrations.m0014.split("--> statement-breakpoint")) {
        const text = statement.replace(/^\s*--.*$/gm, "").trim();
        if (text) state.storage.sql.exec(text);
      }
      const shape = state.storage.sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'messages'").one().sql;
      expect(shape).not.toContain("AUTOINCREMENT");
      expect(state.storage.sql.exec("SELECT name FROM sqlite_sequence WHERE name = 'messages'").toArray()).toEqual([]);
      const triggers = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' ORDER BY name").toArray();
      expect(triggers.map((t) => t.name)).toEqual(["messages_fts_ad", "messages_fts_au"]);
    });
    expect(await inDo(stub, (_instance, state) => state.storage.sql.exec("SELECT seq, id FROM messages ORDER BY seq").toArray())).toEqual(seqsBefore);
    expect(await history(key, agent.id)).toEqual(listedBefore);
    expect(await search(key, agent.id, "zebra")).toHaveLength(2);

    // A later turn's messages follow the copied ones and are recalled; an insert writes the row and its two index entries.
    const next = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "zebra crossing after" } });
    expect((await waitForRun(key, agent.id, next.body.runKey)).status).toBe("completed");
    const seqsAfter = await inDo(stub, (_instance, state) => state.storage.sql.exec<{ seq: number }>("SELECT seq FROM messages ORDER BY seq").toArray());
    expect(seqsAfter.slice(0, seqsBefore.length)).toEqual(seqsBefore.map(({ seq }) => ({ seq })));
    expect(Math.min(...seqsAfter.slice(seqsBefore.length).map((r) => r.seq))).toBeGreaterThan(seqsBefore.at(-1)!.seq);
    expect(await search(key, agent.id, "zebra")).toHaveLength(4);
    const written = await inDo(stub, (_instance, state) => {
      const cursor = state.storage.sql.exec("INSERT INTO messages (id, thread_id, kind, text, metadata, created_at) VALUES ('probe', 'probe-thread', 'user', 'x', '{}', 'now')");
      cursor.toArray();
      return cursor.rowsWritten;
    });
    expect(written).toBe(3);
  });
});
