import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, readSseUntil, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const completedRuns = async (key: string) => {
  const res = await api("GET", "/v1/metrics", { key });
  return Number(/^vigil_runs_total\{outcome="completed"\} (\d+)$/m.exec(String(res.body))?.[1] ?? 0);
};

describe("a run's report survives a crash between the run's end and the tenant's answer", () => {
  for (const point of ["agent.report.beforeSend", "agent.report.beforeAck"]) {
    it(`${point}: the outcome reaches the tenant's metrics once, and the run's activity wakes its follower once, after the object restarts`, async () => {
      const { tenantId, key } = await createTenant();
      const speaker = await createAgent(key, { displayName: "Speaker" });
      const listener = await createAgent(key, { displayName: "Listener" });
      expect((await api("POST", `/v1/agents/${listener.id}/subscriptions`, { key, body: { tokens: [{ tokenClass: "entityId", tokenValue: speaker.id }] } })).status).toBe(201);

      // The object is reset right there: only what it stored survives (beforeAck: the tenant has the report already).
      expect(await agentDo(tenantId, speaker.id).armFault(point)).toBe(true);
      const sent = await api("POST", `/v1/agents/${speaker.id}/messages`, { key, body: { text: "news" } });
      expect(sent.status).toBe(202);
      // A request after the crash activates the object again, and its start sends what was left unsent. The
      // report leaves only after the run reads as completed (the run settles, then the flush), so the crash can
      // come after waitForRun's last read: the speaker is touched on every poll below, or nothing would activate
      // it before its watchdog (30 s; this was the session 8 flake, on main too). getAgent is an RPC, so the
      // touch costs nothing of the key's request budget.
      const run = await waitForRun(key, speaker.id, sent.body.runKey);
      expect(run.status).toBe("completed");
      const touchSpeaker = () => agentDo(tenantId, speaker.id).getAgent().catch(() => null);

      const woken = await eventually(async () => {
        await touchSpeaker();
        const runs = (await api("GET", `/v1/agents/${listener.id}/runs`, { key })).body.data as any[];
        return runs.find((r) => r.reason === "subscription" && r.status === "completed");
      });
      expect(woken).toBeDefined();
      // Exactly once: two completed runs in all (the speaker's and the listener's), and the listener woken once,
      // also after the speaker's next report (which would carry a part the tenant did not take).
      await eventually(async () => (await touchSpeaker(), await completedRuns(key)) === 2);
      const next = await api("POST", `/v1/agents/${speaker.id}/messages`, { key, body: { text: "more news" } });
      await waitForRun(key, speaker.id, next.body.runKey);
      await eventually(async () => {
        const runs = (await api("GET", `/v1/agents/${listener.id}/runs`, { key })).body.data as any[];
        return runs.filter((r) => r.reason === "subscription" && r.status === "completed").length === 2;
      });
      await eventually(async () => (await completedRuns(key)) === 4);
      const listenerRuns = (await api("GET", `/v1/agents/${listener.id}/runs`, { key })).body.data as any[];
      expect(listenerRuns.filter((r) => r.reason === "subscription")).toHaveLength(2);
    });
  }

  it("agent.report.beforeSend: the restarted object sends the lost report's events, with their data, to the tenant's live stream", async () => {
    const { tenantId, key } = await createTenant();
    const speaker = await createAgent(key, { displayName: "Speaker" });
    const stream = await SELF.fetch("https://vigil.test/v1/events/stream", { headers: { authorization: `Bearer ${key}` } });
    expect(await agentDo(tenantId, speaker.id).armFault("agent.report.beforeSend")).toBe(true);
    const sent = await api("POST", `/v1/agents/${speaker.id}/messages`, { key, body: { text: "lost news" } });
    await waitForRun(key, speaker.id, sent.body.runKey);
    // Touched until its start has sent what the crash left unsent.
    const touch = setInterval(() => void agentDo(tenantId, speaker.id).getAgent().catch(() => null), 200);
    try {
      const frames = await readSseUntil(stream, (seen) => seen.some((f) => f.event === "run.completed" && f.data.runKey === sent.body.runKey));
      const texts = frames.filter((f) => f.event === "message.appended" && f.data.runKey === sent.body.runKey).map((f) => f.data.data.message?.text);
      expect(texts).toContain("lost news");
      expect(texts).toContain("echo: lost news");
    } finally {
      clearInterval(touch);
    }
  });
});
