import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

async function engage(key: string, body: Record<string, unknown>) {
  const res = await api("POST", "/v1/brakes", { key, body: { behaviour: "pause", reason: "incident review", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("brakes: what they stop", () => {
  it("settles an in-flight run at its next step: pause → skipped_sleeping/brake_paused, kill → failed_terminal/brake_killed", async () => {
    const { tenantId, key } = await createTenant();
    for (const [behaviour, status, code] of [
      ["pause", "skipped_sleeping", "brake_paused"],
      ["kill", "failed_terminal", "brake_killed"],
    ] as const) {
      const agent = await createAgent(key);
      const stub = agentDo(tenantId, agent.id);
      // The run is cut short mid-flight (as by an eviction); the brake engages before it resumes.
      expect(await stub.armFault("run.beforeModel")).toBe(true);
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "in flight" } });
      await eventually(async () => (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body.status === "running");
      const brake = await engage(key, { scope: "agent", target: agent.id, behaviour });
      // A watchdog call that lands while the cut attempt is still winding down joins it rather than resuming it (see
      // runs.test.ts): it is called until the run settles, not once.
      const run = await eventually(async () => {
        await stub.watchdog();
        const current = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
        return ["queued", "running"].includes(current.status) ? undefined : current;
      });
      expect(run).toMatchObject({ status, errorCode: code });
      expect(run.trace).toMatchObject({ stopReason: code, brakeId: brake.id });
      const kinds = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.map((m: any) => m.kind);
      expect(kinds).not.toContain("assistant");
      await api("POST", `/v1/brakes/${brake.id}/release`, { key });
    }
  });
});
