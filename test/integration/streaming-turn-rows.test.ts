import { describe, expect, it } from "vitest";
import { agentDo, api, createAgent, createTenant, inDo, parseSse, rowsReadSoFar, waitForRun } from "./helpers";

const AGED_EVENTS = 5_000;

/**
 * Ages an agent: `count` old events in its log, already forwarded to the tenant (as an old agent's would be).
 * Dated now, inside the retention window: older rows would be pruned by the retention alarm in 500-row
 * passes, and a pass falling inside the metered turn would count its reads.
 */
async function age(tenantId: string, agentId: string, count: number): Promise<void> {
  await inDo(agentDo(tenantId, agentId), (_instance, state) => {
    state.storage.sql.exec(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO events (seq, last_seq, run_key, items, created_at)
       SELECT (SELECT max(last_seq) FROM events) + i, (SELECT max(last_seq) FROM events) + i, 'old-run-' || (i / 10),
         json_array(json_array('state.changed', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), json('{"filler":true}'))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM n`,
      count,
    );
    const head = state.storage.sql.exec<{ seq: number }>("SELECT max(last_seq) AS seq FROM events").one().seq;
    state.storage.sql.exec("INSERT OR REPLACE INTO counters (key, state) VALUES ('tenant-stream:forwarded-seq', ?)", JSON.stringify({ seq: head }));
  });
}

/** Rows SQLite read in the agent's object while one streaming turn (and its run) went through. */
async function rowsForStreamingTurn(key: string, tenantId: string, agentId: string, turnId: string): Promise<{ rows: number; frames: ReturnType<typeof parseSse> }> {
  const before = await inDo(agentDo(tenantId, agentId), (_instance, state) => rowsReadSoFar(state));
  const res = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text: "how old am I?" }, headers: { accept: "text/event-stream", "idempotency-key": turnId } });
  expect(res.status).toBe(200);
  const runKey = res.headers.get("x-vigil-run-key")!;
  await waitForRun(key, agentId, runKey);
  const rows = (await inDo(agentDo(tenantId, agentId), (_instance, state) => rowsReadSoFar(state))) - before;
  return { rows, frames: parseSse(res.body) };
}

describe("a streaming turn on an aged agent", () => {
  it("reads about as many rows as on a young agent: it follows the log from its head, not from seq 0", async () => {
    const { key, tenantId } = await createTenant();
    const young = await createAgent(key);
    const old = await createAgent(key);
    await age(tenantId, old.id, AGED_EVENTS);

    const youngTurn = await rowsForStreamingTurn(key, tenantId, young.id, "turn-young");
    const oldTurn = await rowsForStreamingTurn(key, tenantId, old.id, "turn-old");

    for (const { frames } of [youngTurn, oldTurn]) {
      expect(frames.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta).join("")).toBe("echo: how old am I?");
      expect(frames.at(-1)?.event).toBe("run.completed");
      expect(frames.every((f) => f.data.data?.filler === undefined)).toBe(true);
    }
    // Replaying the log would read every aged row (5 000+); following from the head reads none of them.
    expect(youngTurn.rows).toBeGreaterThan(0);
    expect(oldTurn.rows).toBeLessThan(youngTurn.rows + 100);
  });

  it("a retried streaming turn replays its own run's events through the runKey index, not the whole log", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    await age(tenantId, agent.id, AGED_EVENTS);
    const first = await rowsForStreamingTurn(key, tenantId, agent.id, "turn-retried");
    const retry = await rowsForStreamingTurn(key, tenantId, agent.id, "turn-retried");
    expect(retry.frames.map((f) => f.event).filter((e) => e !== "text.delta")).toEqual(first.frames.map((f) => f.event).filter((e) => e !== "text.delta"));
    expect(retry.frames.at(-1)?.event).toBe("run.completed");
    expect(retry.rows).toBeLessThan(200);
  });
});
