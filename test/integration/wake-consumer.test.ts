import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import worker from "../../src/worker";
import { agentDo, api, createAgent, createTenant, eventually, inDo, subscriptionWake, waitForRun, freshInstance } from "./helpers";

const AGENTS = 12;

/** The Agents SDK's scheduled callbacks of an agent (one row each). */
const scheduledJobs = (state: DurableObjectState) => state.storage.sql.exec<{ fn: string }>("SELECT fn FROM cf_agents_jobs ORDER BY fn").toArray().map((row) => row.fn);
const WAKES_PER_AGENT = 3;

describe("the wake consumer", () => {
  it("delivers a batch concurrently grouped by agent, and every woken agent runs each wake exactly once (redeliveries in the same batch included)", async () => {
    const { tenantId, key } = await createTenant();
    const agents = await Promise.all(Array.from({ length: AGENTS }, (_, i) => createAgent(key, { displayName: `Agent ${i}` })));
    const jobsOf = new Map<string, string[]>();
    const messages: Array<{ id: string; timestamp: Date; attempts: number; body: unknown }> = [];
    for (let round = 0; round < WAKES_PER_AGENT; round++) {
      for (const agent of agents) {
        const runKey = runKeys.manual(agent.id, `fan-out-${round}`);
        jobsOf.set(agent.id, [...(jobsOf.get(agent.id) ?? []), runKey]);
        const job = { tenantId, agentId: agent.id, reason: "manual", runKey, threadId: threadIds.autonomous(agent.id, runKey), authority: "runtime_instruction", input: {} };
        messages.push({ id: `m-${agent.id}-${round}`, timestamp: new Date(), attempts: 1, body: job });
        // The same job delivered twice in one batch (at-least-once transport) still runs once.
        if (round === 0) messages.push({ id: `m-${agent.id}-${round}-again`, timestamp: new Date(), attempts: 1, body: job });
      }
    }
    messages.push({ id: "m-malformed", timestamp: new Date(), attempts: 1, body: { nope: true } });

    const batch = createMessageBatch("vigil-wake", messages);
    const ctx = createExecutionContext();
    await worker.queue!(batch as never, env as never, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([]);
    expect([...result.explicitAcks].sort()).toEqual(messages.map((m) => m.id).sort());

    for (const agent of agents) {
      const expected = jobsOf.get(agent.id)!;
      for (const runKey of expected) expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
      const runs = await api("GET", `/v1/agents/${agent.id}/runs?limit=50`, { key });
      expect(runs.body.data.map((r: any) => r.runKey).sort()).toEqual([...expected].sort());
      const started = (await env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agent.id}`)).listEvents(0, 1000)) as Array<{ type: string; runKey: string | null }>;
      const startedKeys = started.filter((e) => e.type === "run.started").map((e) => e.runKey);
      // Exactly once: each wake's run started once (coalesced wakes share one start, never start twice).
      expect(new Set(startedKeys).size).toBe(startedKeys.length);
    }
  });

  it("answers a delivered wake once its run and its report are over, with no watchdog armed; a redelivery runs nothing more", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const runKey = runKeys.subscription(agent.id, "sub_inline", "lck-inline");
    const job = subscriptionWake(tenantId, agent.id, runKey, "a change matched");
    // Issue 12 §7: the consumer acknowledges its message only after this answer, and redelivers a lost one, so the queue
    // bounds a crash until then. The run drains in the delivery's stretch (session 13); when it and its report are
    // over by the answer and nothing is open, no watchdog is scheduled (session 14): none re-activates the agent later.
    const answered = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const outcome = await instance.deliverWake(job);
      return {
        outcome,
        status: instance.parts.inbox.getRun(runKey)?.status,
        reported: instance.parts.forwarder.idle && instance.parts.forwarder.forwardedThrough() > 0,
        jobs: scheduledJobs(state),
      };
    });
    expect(answered.outcome).toMatchObject({ ok: true, status: "accepted" });
    expect(answered).toMatchObject({ status: "completed", reported: true });
    expect(answered.jobs).not.toContain("watchdog");
    // At-least-once transport: the same message delivered again is acknowledged and dropped.
    expect(await agentDo(tenantId, agent.id).deliverWake(job)).toMatchObject({ ok: true, status: "duplicate" });
    const events = (await agentDo(tenantId, agent.id).listEvents(0, 1000)) as Array<{ type: string; runKey: string | null }>;
    expect(events.filter((e) => e.type === "run.started" && e.runKey === runKey)).toHaveLength(1);
    expect(await inDo(agentDo(tenantId, agent.id), (_instance, state) => scheduledJobs(state))).not.toContain("watchdog");
  });

  it("keeps the watchdog for a delivered wake whose run is still under way when the delivery answers (it awaits I/O)", async () => {
    const { tenantId, key } = await createTenant();
    // Paced words: the run awaits a timer between them, as a remote model awaits its provider.
    const agent = await createAgent(key, { model: "builtin:echo", modelOptions: { chunkDelayMs: 20 } });
    const runKey = runKeys.subscription(agent.id, "sub_slow", "lck-slow");
    const answered = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      await instance.deliverWake(subscriptionWake(tenantId, agent.id, runKey, "a change matched"));
      return { busy: instance.parts.loop.busy as boolean, jobs: await eventually(async () => (scheduledJobs(state).includes("watchdog") ? scheduledJobs(state) : null)) };
    });
    expect(answered.busy).toBe(true);
    expect(answered.jobs).toContain("watchdog");
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
  });

  it("a cold agent's delivered wake starts the Agents SDK before its work (whatever the entry's declaration), and the watchdog lands", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo", modelOptions: { chunkDelayMs: 20 } });
    const runKey = runKeys.subscription(agent.id, "sub_cold_slow", "lck-cold-slow");
    const seen = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      // A fresh instance on the same storage: the next activation after an eviction.
      const cold = freshInstance(instance, state);
      await state.blockConcurrencyWhile(async () => undefined);
      const startedBefore = cold.lifecycle.isStarted() as boolean;
      await cold.deliverWake(subscriptionWake(tenantId, agent.id, runKey, "a change matched"));
      const jobs = await eventually(async () => (scheduledJobs(state).includes("watchdog") ? scheduledJobs(state) : null));
      return { startedBefore, jobs, startedAfter: cold.lifecycle.isStarted() as boolean };
    });
    // The wake entry started the SDK itself (agent-do.ts `sdkStarted`); the run was still under way at the answer, so it
    // armed its watchdog through the SDK's scheduler.
    expect(seen).toMatchObject({ startedBefore: false, startedAfter: true });
    expect(seen.jobs).toContain("watchdog");
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
  });

  it("other callers' wakes (hooks, decisions, delegation) still drain on a macrotask: their answer is not held by the run", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const runKey = runKeys.subscription(agent.id, "sub_later", "lck-later");
    const underWay = await inDo(agentDo(tenantId, agent.id), async (instance) => {
      await instance.enqueueWake(subscriptionWake(tenantId, agent.id, runKey, "a change matched"));
      return instance.parts.loop.busy as boolean;
    });
    expect(underWay).toBe(false);
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
  });
});
