import { describe, expect, it } from "vitest";
import { agentDo, createAgent, createTenant, inDo, rowsReadSoFar } from "./helpers";

/**
 * Session 16: a message append reads a bounded number of rows however many messages the agent holds in other
 * threads. Its insert returns the thread's previous message through a subquery that names the thread by the inserted
 * row; SQLite 3.40 (Python's) plans that as a walk down `seq` from the new row — through every row for a thread's first
 * message, which is how every subscription or timer wake starts. workerd's SQLite seeks `messages_thread_seq` there
 * (4 rows read at 600 messages); this keeps it so. Counted (the rows SQLite reads), not timed.
 */
describe("a message append's reads (session 16)", () => {
  it("stay bounded in an agent with many messages in other threads: a thread's first message and a later one", { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const rows = await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const { history } = instance.parts;
      // Many threads, interleaved, as an agent's wakes leave them.
      for (let i = 0; i < 600; i++) history.append({ id: `other-${i}`, threadId: `wake-${i % 300}`, kind: i % 2 ? "assistant" : "user", text: `message ${i}` });
      const counted = (append: () => void) => {
        const before = rowsReadSoFar(state);
        append();
        return rowsReadSoFar(state) - before;
      };
      const first = counted(() => history.append({ id: "new-0", threadId: "wake-new", kind: "observation", text: "a change matched" }));
      const later = counted(() => history.append({ id: "old-next", threadId: "wake-0", kind: "user", text: "again" }));
      const stored = history.get("old-next");
      return { first, later, prev: stored?.metadata.prevMessageId ?? null };
    });
    // The head read, the previous-message probe, the insert's index checks and its event: a handful of rows, not 600.
    expect(rows.first).toBeLessThan(20);
    expect(rows.later).toBeLessThan(20);
    expect(rows.prev).toBe("other-300");
  });
});
