import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { meterStatements, statementsRun } from "../../src/objects/shared/seams/statement-meter";
import { agentDo, api, createAgent, createTenant, eventually, inDo, parseSse, freshInstance } from "./helpers";

/**
 * The streaming turn is CPU-bound in the agent's isolate, and its SQLite statements are the largest part: this counts
 * a warm streaming chat turn's statements on the agent (the run, its context, its report, the session re-arm, the
 * compaction planning after it, the watchdog's idempotent arm, the agent row and the day's usage read where each
 * part needs them). Every read goes to SQLite (no copy of the agent, the usage, the inbox, the page or the planner's
 * totals is kept). Measured 70 or 71 across runs; the bound is 71, so a statement added to the path fails it.
 * Counted, not timed.
 */
const MAX_AGENT_STATEMENTS_PER_TURN = 71;

async function streamingTurn(key: string, agentId: string, text: string) {
  const res = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text }, headers: { accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  // The body ends with the run's terminal event: the run is over in the agent when it has been read.
  const frames = parseSse(res.body);
  expect(frames.at(-1)?.event).toBe("run.completed");
  return frames;
}

/** The run's report has gone to the tenant and nothing is left to write (no SQL is run to find out). */
async function settled(tenantId: string, agentId: string): Promise<void> {
  await eventually(() => inDo(agentDo(tenantId, agentId), (instance) => !instance.parts.loop.busy && instance.parts.forwarder.idle));
}

/** The tenant acknowledged every event of the agent's log (the forwarding cursor is at its head). */
async function forwardedThroughHead(tenantId: string, agentId: string): Promise<boolean> {
  return inDo(agentDo(tenantId, agentId), (instance, state) => {
    const head = state.storage.sql.exec<{ seq: number }>("SELECT max(last_seq) AS seq FROM events").one().seq;
    return instance.parts.forwarder.forwardedThrough() === head;
  });
}

/** The stored forwarding cursor. */
const storedCursor = (state: DurableObjectState): number | undefined => {
  const row = state.storage.sql.exec<{ state: string }>("SELECT state FROM counters WHERE key = 'tenant-stream:forwarded-seq'").toArray()[0]?.state;
  return row === undefined ? undefined : JSON.parse(row).seq;
};

describe("agent statements per chat turn", () => {
  it(`a warm streaming chat turn runs at most ${MAX_AGENT_STATEMENTS_PER_TURN} statements on the agent, its report included`, { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    // Warm: the object is started, its snapshot, profile, usage window, forwarding cursor and watchdog known.
    for (let i = 0; i < 3; i++) await streamingTurn(key, agent.id, `warm ${i}`);
    await settled(tenantId, agent.id);

    const before = await inDo(agentDo(tenantId, agent.id), (_instance, state) => {
      meterStatements(state.storage.sql as never);
      return statementsRun(state.storage.sql as never)!;
    });
    const frames = await streamingTurn(key, agent.id, "count me");
    await settled(tenantId, agent.id);
    const after = await inDo(agentDo(tenantId, agent.id), (_instance, state) => statementsRun(state.storage.sql as never)!);

    // The turn did all its work: the reply streamed, the run completed, and its report reached the tenant stream.
    expect(frames.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta).join("")).toBe("echo: count me");
    expect(await forwardedThroughHead(tenantId, agent.id)).toBe(true);
    const statements = after - before;
    expect(statements).toBeGreaterThan(20);
    expect(statements).toBeLessThanOrEqual(MAX_AGENT_STATEMENTS_PER_TURN);
  });

  it("the stored forwarding cursor reaches the log's head once the tenant acknowledged the report; a restart then sends nothing", { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await streamingTurn(key, agent.id, "first");
    await streamingTurn(key, agent.id, "second");
    await settled(tenantId, agent.id);
    const heads = await inDo(agentDo(tenantId, agent.id), (_instance, state) => ({
      stored: storedCursor(state),
      head: state.storage.sql.exec<{ seq: number }>("SELECT max(last_seq) AS seq FROM events").one().seq,
    }));
    expect(heads.stored).toBe(heads.head);
    const tenantEvents = () => inDo(env.TENANT.get(env.TENANT.idFromName(tenantId)), (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM tenant_events").one().n);
    const recorded = await tenantEvents();
    // A fresh instance (the next activation) finds nothing after the stored cursor: no report leaves.
    const sent = await inDo(agentDo(tenantId, agent.id), async (instance, state) => {
      const fresh = freshInstance(instance, state);
      let reports = 0;
      const send = fresh.parts.forwarder["deps"].send;
      fresh.parts.forwarder["deps"].send = (...args: Parameters<typeof send>) => (reports++, send(...args));
      fresh.parts.forwarder.schedule();
      await eventually(async () => fresh.parts.forwarder.idle);
      return reports;
    });
    expect(sent).toBe(0);
    expect(await tenantEvents()).toBe(recorded);
  });

  it("an erased agent created again in the same object is read anew: nothing kept in memory outlives the erasure", { timeout: 60_000 }, async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await streamingTurn(key, agent.id, "before the erasure");
    await settled(tenantId, agent.id);
    await inDo(agentDo(tenantId, agent.id), async (instance) => {
      const kept = instance.parts.profile.get();
      expect(kept.displayName).toBe("Coach");
      const erased = await instance.parts.erasure.erase("tenant_erased");
      expect(erased.ok).toBe(true);
      expect(instance.parts.profile.get()).toBeNull();
      const again = await instance.createAgent(tenantId, agent.id, {
        kind: kept.kind,
        displayName: "Coach again",
        mode: kept.mode,
        allowedCategoryIds: [],
        model: kept.config.modelId,
        modelOptions: kept.config.modelOptions,
        fallbackModels: [],
        controlMode: kept.config.controlMode,
        doubleTexting: kept.config.doubleTexting,
        start: true,
      });
      expect(again.ok).toBe(true);
      expect(instance.parts.profile.get().displayName).toBe("Coach again");
      // The usage window kept for today went with the erasure: the new agent starts from nothing.
      const usage = await instance.getUsage();
      expect(usage.usage.usage.tokens).toBe(0);
    });
    // Its first turn runs and reports as a new agent's would (the forwarding cursor was read again, from 0).
    const frames = await streamingTurn(key, agent.id, "after the erasure");
    expect(frames.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta).join("")).toBe("echo: after the erasure");
    await settled(tenantId, agent.id);
    expect(await forwardedThroughHead(tenantId, agent.id)).toBe(true);
    // The Agents SDK's tables were created again with the erasure: the new agent's session expiry is scheduled (the
    // SDK, which made its tables at the object's start, would otherwise answer "no such table" until a restart).
    const callbacks = await inDo(agentDo(tenantId, agent.id), async (instance) => (await instance.listSchedules()).map((row: { callback: string }) => row.callback));
    expect(callbacks).toContain("onSessionExpiry");
  });
});
