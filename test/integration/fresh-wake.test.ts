import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { verifyMemoryCopy } from "../../src/objects/agent/rows";
import { agentDo, createAgent, createTenant, inDo, subscriptionWake, freshInstance } from "./helpers";

/**
 * Issue 12 §7 (session 16): a wake enqueued into an inbox the activation read as empty is answered to the drain's
 * first ready read from the rows its inserts returned. These cases turn the test deployments' comparison with the
 * read off, so a kept wake that should have been dropped shows as a wrong answer rather than a thrown comparison.
 */
describe("the fresh wake an empty inbox keeps (issue 12 §7)", () => {
  it("answers the drain's reads as the read would, until a write to its run", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const answers = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const { inbox } = freshInstance(instance, state).parts;
      await state.blockConcurrencyWhile(async () => undefined);
      verifyMemoryCopy(false);
      try {
        const runKey = runKeys.subscription(agent.id, "sub_fresh", "lck-fresh");
        inbox.enqueue(subscriptionWake(tenantId, agent.id, runKey, "fresh"));
        const kept = inbox.nextWithRun();
        const again = inbox.nextWithRun();
        // Past the first write to its run, the inbox reads.
        inbox.markRunning(kept!.run);
        return { runKey, kept, again, read: inbox.pending(5), status: inbox.nextWithRun()?.run.status };
      } finally {
        verifyMemoryCopy(true);
      }
    });
    expect(answers.kept?.item.runKey).toBe(answers.runKey);
    expect(answers.kept?.run).toMatchObject({ runKey: answers.runKey, status: "queued", attempt: 0 });
    // Any read before a write gives the same answer.
    expect(answers.again).toEqual(answers.kept);
    expect(answers.read.map((item: { runKey: string }) => item.runKey)).toEqual([answers.runKey]);
    expect(answers.status).toBe("running");
  });

  it("is forgotten when a transaction around the enqueue throws, and when the wake's run is parked", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const answers = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const { inbox, db } = freshInstance(instance, state).parts;
      await state.blockConcurrencyWhile(async () => undefined);
      verifyMemoryCopy(false);
      try {
        const undone = runKeys.subscription(agent.id, "sub_fresh", "lck-undone");
        try {
          db.transaction(() => {
            inbox.enqueue(subscriptionWake(tenantId, agent.id, undone, "undone"));
            throw new Error("rolled back");
          });
        } catch {
          // expected
        }
        const afterRollback = inbox.nextWithRun();
        const parked = runKeys.subscription(agent.id, "sub_fresh", "lck-parked");
        const second = freshInstance(instance, state).parts.inbox;
        await state.blockConcurrencyWhile(async () => undefined);
        verifyMemoryCopy(false);
        second.enqueue(subscriptionWake(tenantId, agent.id, parked, "parked"));
        second.park(parked);
        return { afterRollback, afterPark: second.nextWithRun() };
      } finally {
        verifyMemoryCopy(true);
      }
    });
    expect(answers).toEqual({ afterRollback: null, afterPark: null });
  });
});
