import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createTaskCommand, playbookAgentInCategory, taskTitlesIn, waitForRun } from "./helpers";

const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));

const setup = (controlMode: string | null = "orchestrator") => playbookAgentInCategory(controlMode);

const audit = async (key: string) => (await api("GET", "/v1/audit?limit=200", { key })).body.data as Array<{ action: string; target: string | null; detail: any }>;

async function send(key: string, agentId: string, text: string, sessionId?: string): Promise<string> {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text, ...(sessionId ? { sessionId } : {}) } });
  expect(sent.status).toBe(202);
  return sent.body.runKey;
}

/** Polls gently: the per-key rate limit (100/min) would refuse `eventually`'s 25 ms cadence. */
async function poll<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const resolve = (key: string, id: string, body: Record<string, unknown>) => api("POST", `/v1/decisions/${id}/resolve`, { key, body });
const toolResults = async (key: string, agentId: string) => ((await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data as any[]).filter((m) => m.kind === "toolResult");

describe("decision timeouts apply the policy deterministically", () => {
  async function withTimeouts(decisionTimeouts: Record<string, unknown>) {
    const world = await setup();
    const put = await api("PUT", "/v1/policy", { key: world.key, body: { decisionTimeouts } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(await tenantDo(world.tenantId).setDecisionTickMs(10)).toBe(true);
    return world;
  }

  it("auto_recommend approves a tool call when nobody answers, with no trust change", async () => {
    const { key, agent, categoryId } = await withTimeouts({ orchestrator: { timeoutTicks: 2, onTimeout: "auto_recommend" } });
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Auto"));
    const run = await waitForRun(key, agent.id, runKey);
    expect(run.status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Auto"]);
    const [decision] = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data;
    expect(decision).toMatchObject({ status: "resolved", resolution: { resolutionType: "approve", resolvedBy: "timeout", trustOutcome: "decision_auto_resolved" } });
    const trail = await audit(key);
    expect(trail.find((a) => a.action === "decision.timeout")?.detail).toMatchObject({ action: "auto_resolved", path: ["auto_recommend"] });
    expect(trail.find((a) => a.action === "trust.updated")?.detail).toMatchObject({ effectiveDelta: 0, previousScore: 50, nextScore: 50 });
  });

  it("extend, then escalate to critical, then cancel: the call is refused with code 'cancelled'", async () => {
    const { key, agent, categoryId } = await withTimeouts({ orchestrator: { timeoutTicks: 1, onTimeout: "extend", maxExtensions: 1 } });
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Never"));
    const run = await poll(async () => {
      const res = await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key });
      return res.body.status === "completed" ? res.body : undefined;
    }, 20_000);
    expect(run.status).toBe("completed");
    const [result] = await toolResults(key, agent.id);
    expect(result.content).toMatchObject({ ok: false, code: "cancelled" });
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
    const [decision] = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data;
    expect(decision).toMatchObject({ status: "cancelled", payload: { severity: "critical", timedOut: true, extensionsUsed: 1 } });
    // low → medium → high → critical, then cancel: one extension, three escalations, one cancellation.
    const steps = (await audit(key)).filter((a) => a.action === "decision.timeout").map((a) => a.detail.action).reverse();
    expect(steps).toEqual(["extended", "escalated", "escalated", "escalated", "cancelled"]);
  });
});
