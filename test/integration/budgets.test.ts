import { beforeEach, describe, expect, it } from "vitest";
import { dayKey } from "../../src/core/governance/budget";
import { api, clearOfPeriodEdge, createAgent, createTenant, DAY_MS, MINUTE_MS, waitForRun } from "./helpers";

// Budgets and quotas count per tenant-local day (UTC here): a test must not straddle midnight, or its second run
// starts a fresh day. The wait happens only in the last 30 s of a day.
beforeEach(() => clearOfPeriodEdge(DAY_MS, 30_000), 40_000);

async function putPolicy(key: string, body: Record<string, unknown>) {
  const res = await api("PUT", "/v1/policy", { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function send(key: string, agentId: string, text: string) {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return waitForRun(key, agentId, sent.body.runKey);
}

async function toolResults(key: string, agentId: string): Promise<Array<{ toolName: string; content: any }>> {
  const messages = (await api("GET", `/v1/agents/${agentId}/messages?limit=200`, { key })).body.data;
  return messages
    .filter((m: any) => m.kind === "toolResult")
    .reverse()
    .map((m: any) => ({ toolName: m.metadata.toolName, content: m.content }));
}

const usageOf = async (key: string, agentId: string, query = "") => (await api("GET", `/v1/agents/${agentId}/usage${query}`, { key })).body;

const playbook = { model: "builtin:playbook", playbook: { rules: [], fallbackReply: "done" } };

describe("daily budgets", () => {
  it("a tool-call budget refuses the call that would pass it, then ends the run failed_terminal/budget_exceeded", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { ...playbook, budgets: { toolCalls: 1 } });
    const run = await send(key, agent.id, "/tool list_allowed_categories {}\n/tool list_tasks_in_scope {}");
    expect(run).toMatchObject({ status: "failed_terminal", errorCode: "budget_exceeded" });
    expect(run.trace).toMatchObject({ stopReason: "budget_exceeded", dimension: "toolCalls", used: 1, limit: 1 });
    const results = await toolResults(key, agent.id);
    expect(results.map((r) => [r.toolName, r.content.ok, r.content.code])).toEqual([
      ["list_allowed_categories", true, undefined],
      ["list_tasks_in_scope", false, "budget_exceeded"],
    ]);
    expect(run.trace.policy.map((p: any) => [p.gate, p.code, p.subject])).toEqual([
      ["budget", "budget_exceeded", "list_tasks_in_scope"],
      ["budget", "budget_exceeded", "step"],
    ]);
    const usage = await usageOf(key, agent.id);
    expect(usage.usage.toolCalls).toBe(1);
    expect(usage.limits).toEqual({ tokens: null, costMicroUsd: null, runtimeMs: null, toolCalls: 1 });
    expect(usage.tools).toEqual([{ toolName: "list_allowed_categories", calls: 1, quotaPerDay: null }]);
  });

  it("tokens: the tenant policy's default applies, an agent's own budget overrides it", async () => {
    const { key } = await createTenant();
    await putPolicy(key, { budgets: { tokens: 1 } });
    const capped = await createAgent(key);
    const generous = await createAgent(key, { displayName: "Generous", budgets: { tokens: 1_000_000 } });

    expect((await send(key, capped.id, "first")).status).toBe("completed");
    const spent = await usageOf(key, capped.id);
    expect(spent.usage.tokens).toBeGreaterThan(0);
    expect(spent.limits.tokens).toBe(1);
    const refused = await send(key, capped.id, "second");
    expect(refused).toMatchObject({ status: "failed_terminal", errorCode: "budget_exceeded" });
    expect(refused.trace.policy).toEqual([expect.objectContaining({ gate: "budget", outcome: "denied", code: "budget_exceeded", detail: expect.objectContaining({ dimension: "tokens" }) })]);
    const kinds = (await api("GET", `/v1/agents/${capped.id}/messages`, { key })).body.data.map((m: any) => m.kind);
    expect(kinds.filter((kind: string) => kind === "assistant")).toHaveLength(1);

    expect((await send(key, generous.id, "first")).status).toBe("completed");
    expect((await send(key, generous.id, "second")).status).toBe("completed");
    expect((await usageOf(key, generous.id)).limits.tokens).toBe(1_000_000);
  });

  it("runtime is metered per run and capped like the other dimensions", async () => {
    const { key } = await createTenant();
    // The reply streams a word every 25 ms, so the first run alone uses more than the 100 ms allowed.
    const agent = await createAgent(key, { budgets: { runtimeMs: 100 }, modelOptions: { chunkDelayMs: 25 } });
    const first = await send(key, agent.id, "one two three four five six seven eight nine ten eleven twelve");
    expect(first.status, JSON.stringify(first)).toBe("completed");
    expect((await usageOf(key, agent.id)).usage.runtimeMs).toBeGreaterThanOrEqual(100);
    const refused = await send(key, agent.id, "again");
    expect(refused).toMatchObject({ status: "failed_terminal", errorCode: "budget_exceeded" });
    expect(refused.trace.dimension).toBe("runtimeMs");
  });
});

describe("tool quotas and rate limits", () => {
  it("a per-tool daily quota refuses the call past it with tool_quota_exceeded; other tools still run", async () => {
    const { key } = await createTenant();
    await putPolicy(key, { toolQuotas: { list_tasks_in_scope: 1 } });
    const agent = await createAgent(key, playbook);
    const run = await send(key, agent.id, "/tool list_tasks_in_scope {}\n/tool list_tasks_in_scope {\"limit\":5}\n/tool list_allowed_categories {}");
    expect(run.status).toBe("completed");
    const results = await toolResults(key, agent.id);
    expect(results.map((r) => [r.toolName, r.content.ok, r.content.code])).toEqual([
      ["list_tasks_in_scope", true, undefined],
      ["list_tasks_in_scope", false, "tool_quota_exceeded"],
      ["list_allowed_categories", true, undefined],
    ]);
    const usage = await usageOf(key, agent.id);
    expect(usage.tools).toEqual([
      { toolName: "list_allowed_categories", calls: 1, quotaPerDay: null },
      { toolName: "list_tasks_in_scope", calls: 1, quotaPerDay: 1 },
    ]);
  });

  it("the quota carries across runs of the same day", async () => {
    const { key } = await createTenant();
    await putPolicy(key, { toolQuotas: { list_tasks_in_scope: 1 } });
    const agent = await createAgent(key, playbook);
    await send(key, agent.id, "/tool list_tasks_in_scope {}");
    const second = await send(key, agent.id, "/tool list_tasks_in_scope {}");
    expect(second.status).toBe("completed");
    const results = await toolResults(key, agent.id);
    expect(results.map((r) => r.content.code ?? "ok")).toEqual(["ok", "tool_quota_exceeded"]);
    expect(second.trace.policy).toEqual([expect.objectContaining({ gate: "tool_quota", code: "tool_quota_exceeded", subject: "list_tasks_in_scope" })]);
  });

  it("a per-tool rate limit refuses calls past it within the minute with a retryable rate_limited", async () => {
    const { key } = await createTenant();
    await putPolicy(key, { toolRateLimits: { list_tasks_in_scope: 1 } });
    const agent = await createAgent(key, playbook);
    // The per-minute window is aligned to the clock: both calls must land in the same minute.
    await clearOfPeriodEdge(MINUTE_MS, 10_000);
    await send(key, agent.id, "/tool list_tasks_in_scope {}\n/tool list_tasks_in_scope {\"limit\":5}");
    const results = await toolResults(key, agent.id);
    expect(results.map((r) => r.content.ok)).toEqual([true, false]);
    expect(results[1]!.content).toMatchObject({ code: "rate_limited", retryable: true });
  });
});

describe("GET /v1/agents/:id/usage", () => {
  it("reports today in the tenant's time zone by default, any other day on request, and validates input", async () => {
    const { key } = await createTenant();
    const other = await createTenant("other");
    const agent = await createAgent(key);
    const before = dayKey(Date.now(), "UTC");
    await send(key, agent.id, "count me");
    const today = await api("GET", `/v1/agents/${agent.id}/usage`, { key });
    expect(today.status).toBe(200);
    expect([before, dayKey(Date.now(), "UTC")]).toContain(today.body.day);
    expect(today.body).toMatchObject({ agentId: agent.id, timeZone: "UTC", limits: { tokens: null, costMicroUsd: null, runtimeMs: null, toolCalls: null } });
    expect(today.body.usage.tokens).toBeGreaterThan(0);
    expect(Date.parse(today.body.resetsAt)).toBeGreaterThan(Date.now());

    const past = await api("GET", `/v1/agents/${agent.id}/usage?day=2020-01-01`, { key });
    expect(past.body).toMatchObject({ day: "2020-01-01", usage: { tokens: 0, costMicroUsd: 0, runtimeMs: 0, toolCalls: 0 }, resetsAt: null, tools: [] });
    const bad = await api("GET", `/v1/agents/${agent.id}/usage?day=yesterday`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect((await api("GET", `/v1/agents/${agent.id}/usage`, { key: other.key })).status).toBe(404);
  });
});
