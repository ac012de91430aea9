import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, readSseUntil, waitForRun } from "./helpers";

/** Issue 12 §5: the tenant stream keeps references to agent events, not a second copy of their data. */
const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));

const openStream = (key: string) => SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}` } });

describe("tenant stream: agent events stored as references", () => {
  it("stores no copy of an agent event's data, and still replays and streams it whole", async () => {
    const { tenantId, key } = await createTenant("stream-refs");
    const agent = await createAgent(key);
    const live = await openStream(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "remember me" } });
    expect(sent.status).toBe(202);
    await waitForRun(key, agent.id, sent.body.runKey);

    const isReply = (frame: { event: string; data: any }) => frame.event === "message.appended" && frame.data.data.message?.kind === "assistant";
    // Live: the data as the agent forwarded it.
    const liveFrames = await readSseUntil(live, (frames) => frames.some(isReply));
    expect(liveFrames.find(isReply)!.data.data.message.text).toBe("echo: remember me");

    // Stored: agent events are references (agent, seq, type, run) with empty data; tenant-level events keep theirs.
    const rows = await runInDurableObject(tenantDo(tenantId), async (_instance, state) => state.storage.sql.exec("SELECT agent_id, item.value ->> '$[1]' AS agent_seq, item.value ->> '$[0]' AS type, item.value -> '$[4]' AS data FROM tenant_events, json_each(tenant_events.items) AS item").toArray());
    const agentRows = rows.filter((row) => row.agent_seq !== null);
    expect(agentRows.length).toBeGreaterThan(3);
    for (const row of agentRows) expect(row.data).toBe("{}");
    expect(JSON.stringify(rows)).not.toContain("remember me");

    // Replayed: hydrated from the agent, byte for byte what it holds.
    const replayed = await readSseUntil(await openStream(key), (frames) => frames.some(isReply));
    const reply = replayed.find(isReply)!;
    expect(reply.data.data.message.text).toBe("echo: remember me");
    const held = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.find((m: any) => m.kind === "assistant");
    expect(reply.data.data.message.id).toBe(held.id);
    for (const frame of replayed) if (frame.data.agentSeq !== null) expect(Object.keys(frame.data.data).length, frame.event).toBeGreaterThan(0);
  });
});
