import { describe, expect, it } from "vitest";
import { meterStatements, statementsRun } from "../../src/objects/shared/seams/statement-meter";
import { agentDo, createAgent, createTenant, inDo } from "./helpers";

/**
 * Issue 12 §8 (session 12): the wake inbox keeps how many wakes it holds, read with every ready read and lowered by
 * its own deletes, so a turn whose inbox holds only its own wake reads nothing to learn that no other wake waits. Each
 * answer is compared with the table read directly; an insert the kept count did not hear of (an enqueue that would not
 * drop it, a test's raw row without `forget`) would lose a wake here.
 */
describe("the wake inbox's kept count (issue 12 §8)", () => {
  it("answers exactly what a read would, and reads nothing once the inbox is known empty", { timeout: 30_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await inDo(agentDo(tenantId, agent.id), (instance, state) => {
      const inbox = instance.parts.inbox;
      const exec = (query: string, ...args: unknown[]) => state.storage.sql.exec(query, ...args).toArray() as Array<Record<string, unknown>>;
      const stored = () => exec("SELECT run_key FROM wake_inbox ORDER BY seq").map((row) => row.run_key);
      const job = (runKey: string, threadId = "thread-a") => ({ runKey, reason: "manual", threadId, authority: "system", input: {} });
      meterStatements(state.storage.sql as never);
      const counted = <T>(read: () => T): { value: T; statements: number } => {
        const before = statementsRun(state.storage.sql as never)!;
        const value = read();
        return { value, statements: statementsRun(state.storage.sql as never)! - before };
      };
      const next = () => inbox.nextWithRun()?.item.runKey ?? null;

      inbox.forget();
      expect(stored()).toEqual([]);
      inbox.enqueue(job("rk-a"));
      inbox.enqueue(job("rk-b"));
      expect(inbox.unsettledOn("thread-a", "none")).toEqual(stored());
      expect(next()).toBe("rk-a");
      // Two wakes held: the companions are read (rk-b waits beside rk-a).
      expect(inbox.pendingBeside(5).map((item: { runKey: string }) => item.runKey)).toEqual(["rk-a", "rk-b"]);

      inbox.finish("rk-a", "completed");
      expect(stored()).toEqual(["rk-b"]);
      expect(next()).toBe("rk-b");
      // rk-b's own wake alone: no companion, and nothing read to know it.
      expect(counted(() => inbox.pendingBeside(5))).toEqual({ value: [], statements: 0 });

      // A finish whose wake is already gone deletes nothing: the count must not move (rk-b still waits).
      inbox.finish("rk-a", "completed");
      expect(next()).toBe("rk-b");

      inbox.finish("rk-b", "completed");
      expect(stored()).toEqual([]);
      // Known empty: the drain's last read, the admission's question and the forwarder's hold answer without SQL.
      expect(counted(() => [next(), inbox.unsettledOn("thread-a", "none"), inbox.next()])).toEqual({ value: [null, [], null], statements: 0 });

      // An enqueue makes the count unknown: the next read finds its wake.
      inbox.enqueue(job("rk-c"));
      expect(inbox.unsettledOn("thread-a", "none")).toEqual(["rk-c"]);
      expect(next()).toBe("rk-c");
      inbox.finish("rk-c", "completed");
      expect(next()).toBeNull();

      // A row written past the class is seen once the class is told to forget what it kept.
      exec("INSERT INTO wake_inbox (run_key, reason, thread_id, authority, input, enqueued_at) VALUES ('rk-c', 'manual', 'thread-a', 'system', '{}', ?)", new Date().toISOString());
      inbox.forget();
      expect(next()).toBe("rk-c");
      inbox.finish("rk-c", "completed");
      expect(stored()).toEqual([]);
      expect(next()).toBeNull();
    });
  });
});
