import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { agentDo, createAgent, createTenant, eventually, inDo, recordStatements, subscriptionWake, freshInstance } from "./helpers";

const EVENTS_READ = /from "events" where "events"\."seq" >/i;

/**
 * Issue 12 §7 (session 16): a wake the tenant queued says how far it had recorded the agent's events
 * (`WakeJob.recordedThrough`). A cold agent's forwarding cursor is written lazily, so without it the run's report
 * re-sent an earlier instance's events by reference, after reading them back. Counted, not timed.
 */
async function coldWake(recordedThrough: (head: number) => number) {
  const { key, tenantId } = await createTenant();
  const agent = await createAgent(key);
  // The create's report reached the tenant; its cursor is not written (the next run's end writes it).
  await eventually(() => inDo(agentDo(tenantId, agent.id), (instance) => instance.parts.forwarder.idle));
  return inDo(agentDo(tenantId, agent.id), async (instance, state) => {
    const head = state.storage.sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM events").one().seq;
    const cold = freshInstance(instance, state);
    await state.blockConcurrencyWhile(async () => undefined);
    const { seen, stop } = recordStatements(state);
    try {
      const runKey = runKeys.subscription(agent.id, "sub_recorded", `lck-${head}`);
      const job = { ...subscriptionWake(tenantId, agent.id, runKey, "recorded"), recordedThrough: recordedThrough(head) };
      expect(await cold.deliverWake(job)).toMatchObject({ ok: true, status: "accepted" });
      const newHead = state.storage.sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM events").one().seq;
      await eventually(() => cold.parts.forwarder.idle && cold.parts.forwarder.forwardedThrough() >= newHead);
      return { head, eventsRead: seen.filter((query) => EVENTS_READ.test(query)).length };
    } finally {
      stop();
    }
  });
}

describe("the tenant's recorded seq on a wake (issue 12 §7)", () => {
  it("starts a cold agent's report after it: nothing of the earlier instance is read back", async () => {
    const { head, eventsRead } = await coldWake((head) => head);
    expect(head).toBeGreaterThan(0);
    expect(eventsRead).toBe(0);
  });

  it("is not applied past what the agent stored before this instance (a log started over): the events are read", async () => {
    const { eventsRead } = await coldWake((head) => head + 1_000);
    expect(eventsRead).toBeGreaterThan(0);
  });

  it("without it, the cold agent reads the earlier instance's events back (what the claim saves)", async () => {
    const { eventsRead } = await coldWake(() => 0);
    expect(eventsRead).toBeGreaterThan(0);
  });
});
