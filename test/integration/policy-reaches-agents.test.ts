import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, clearOfPeriodEdge, createAgent, createTenant, DAY_MS, eventually, waitForRun } from "./helpers";

// Each change is made after the agent has run once (it holds its tenant snapshot, and whatever it keeps from a run);
// its next run must see the change. Budgets count per day: no test straddles midnight.
beforeEach(() => clearOfPeriodEdge(DAY_MS, 30_000), 40_000);
afterEach(() => vi.restoreAllMocks());

async function send(key: string, agentId: string, text: string) {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return waitForRun(key, agentId, sent.body.runKey);
}

async function putPolicy(key: string, body: Record<string, unknown>) {
  const res = await api("PUT", "/v1/policy", { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const toolResultsOf = async (key: string, agentId: string) =>
  ((await api("GET", `/v1/agents/${agentId}/messages?limit=100`, { key })).body.data as any[]).filter((m) => m.kind === "toolResult").map((m) => m.content);

describe("a tenant change reaches every existing agent from its next run", () => {
  it("telemetry: an agent that ran before the OTLP endpoint was set exports its next run", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const before = await send(key, agent.id, "before the policy");
    // The collector, as the egress door reaches it (an OTLP/HTTP receiver answers `{}`).
    const exports: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      exports.push(new Request(input as RequestInfo, init).url);
      return new Response("{}", { headers: { "content-type": "application/json" } });
    });
    await putPolicy(key, { telemetry: { otlpEndpoint: "http://127.0.0.1:4318/v1/traces" } });
    const after = await send(key, agent.id, "after the policy");
    // The run's trace records the OTLP gate's outcome once the export was sent.
    const exported = await eventually(async () => {
      const run = (await api("GET", `/v1/agents/${agent.id}/runs/${after.runKey}`, { key })).body;
      return run.trace.policy?.find((row: any) => row.gate === "otlp");
    });
    expect(exported).toMatchObject({ gate: "otlp", outcome: "allowed", subject: "127.0.0.1:4318" });
    expect(exports).toEqual(["http://127.0.0.1:4318/v1/traces"]);
    const first = (await api("GET", `/v1/agents/${agent.id}/runs/${before.runKey}`, { key })).body;
    expect((first.trace.policy ?? []).filter((row: any) => row.gate === "otlp")).toEqual([]);
  });

  it("budgets: a token budget set after the agent ran ends its next run budget_exceeded", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    expect((await send(key, agent.id, "spend some tokens")).status).toBe("completed");
    await putPolicy(key, { budgets: { tokens: 1 } });
    expect(await send(key, agent.id, "and some more")).toMatchObject({ status: "failed_terminal", errorCode: "budget_exceeded" });
  });

  it("brakes: a brake engaged after the agent ran refuses its next message; released, the next one runs", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    expect((await send(key, agent.id, "first")).status).toBe("completed");
    const brake = await api("POST", "/v1/brakes", { key, body: { scope: "agent", target: agent.id, behaviour: "pause", reason: "incident review" } });
    expect(brake.status, JSON.stringify(brake.body)).toBe(201);
    const refused = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "braked" } });
    expect([refused.status, refused.body.code]).toEqual([423, "brake_engaged"]);
    expect((await api("POST", `/v1/brakes/${brake.body.id}/release`, { key })).status).toBe(200);
    expect((await send(key, agent.id, "released")).status).toBe("completed");
  });

  it("extension registrations: an HTTP tool registered after the agent ran is callable in its next run", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [], fallbackReply: "done" } });
    expect((await send(key, agent.id, '/tool http_weather {"city":"Berlin"}')).status).toBe("completed");
    expect((await toolResultsOf(key, agent.id)).map((result) => result.code)).toEqual(["unknown_tool"]);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(JSON.stringify({ forecast: "sunny" }), { headers: { "content-type": "application/json" } }));
    const registered = await api("POST", "/v1/tools", {
      key,
      body: {
        name: "weather",
        description: "Today's weather for a city",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
        url: "https://tools.example.com/weather",
        riskLevel: "low",
        capability: "taskRead",
      },
    });
    expect(registered.status).toBe(201);
    expect((await send(key, agent.id, '/tool http_weather {"city":"Paris"}')).status).toBe("completed");
    expect((await toolResultsOf(key, agent.id)).map((result) => result.ok)).toEqual([true, false]);
  });

  it("providers: an endpoint allowed after the agent ran is the one its next run asks for", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "openai:gpt-4o-mini" });
    expect(await send(key, agent.id, "first")).toMatchObject({ status: "failed_terminal", errorCode: "provider_not_allowed" });
    await putPolicy(key, { providers: [{ id: "openai", kind: "openai", policyVersion: "2025-01", models: ["gpt-4o-mini"] }] });
    // Past the provider check now: the next refusal is the one an allowed provider without a receipt gets.
    expect(await send(key, agent.id, "second")).toMatchObject({ status: "failed_terminal", errorCode: "privacy_confirmation_required" });
  });
});
