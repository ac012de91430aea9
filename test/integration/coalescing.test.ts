import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys, threadIds } from "../../src/core/ids/run-keys";
import { api, createAgent, createTenant, eventually, subscriptionWake, waitForRun } from "./helpers";

describe("per-agent wake coalescing", () => {
  it("merges autonomous wakes that queued behind a run into one run, keeping every runKey", async () => {
    const { tenantId, key } = await createTenant();
    // Words 300 ms apart keep the busy run in flight for seconds: long enough to see it running and to queue three
    // wakes behind it on a loaded machine (at 40 ms it could end before the first poll saw it running).
    const agent = await createAgent(key, { modelOptions: { chunkDelayMs: 300 } });
    const stub = env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agent.id}`));
    const busy = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "a slow conversation turn to keep the agent busy" } });
    await eventually(async () => (await api("GET", `/v1/agents/${agent.id}/runs/${busy.body.runKey}`, { key })).body.status === "running");

    const keys = ["lck-1", "lck-2", "lck-3"].map((lck) => runKeys.subscription(agent.id, "sub_1", lck));
    for (const [index, runKey] of keys.entries()) {
      const outcome = await stub.enqueueWake(subscriptionWake(tenantId, agent.id, runKey, `change ${index}`));
      expect(outcome).toMatchObject({ ok: true, status: "accepted" });
    }
    const runs = [];
    for (const runKey of keys) runs.push(await waitForRun(key, agent.id, runKey));
    expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"]);
    expect(runs[0].trace.coalescedRunKeys).toEqual([keys[1], keys[2]]);
    expect(runs[1].trace.coalescedInto).toBe(keys[0]);
    expect(runs[2].trace.coalescedInto).toBe(keys[0]);

    const history = await api("GET", `/v1/agents/${agent.id}/messages?threadId=${encodeURIComponent(threadIds.autonomous(agent.id, keys[0]!))}`, { key });
    const observations = history.body.data.filter((m: any) => m.kind === "observation").map((m: any) => m.text).sort();
    expect(observations).toEqual(["change 0", "change 1", "change 2"]);
    expect(history.body.data.filter((m: any) => m.kind === "assistant")).toHaveLength(1);
  });
});
