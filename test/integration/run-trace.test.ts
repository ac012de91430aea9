import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const playbookAgent = (key: string, extra: Record<string, unknown> = {}) =>
  createAgent(key, {
    kind: "orchestrator",
    model: "builtin:playbook",
    playbook: { rules: [{ when: { reason: "toolResult" }, reply: "noted {{observation.chosenOptionId}}" }, { when: {}, reply: "done" }] },
    ...extra,
  });

describe("runs and traces", () => {
  it("the run view shows reason, steps, tool calls from the plans, policy, attempts, tokens, cost and latency; the list stays light", async () => {
    const { key } = await createTenant();
    const agent = await playbookAgent(key);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool memory_search {"query":"gym"}\n/tool teleport {}' } });
    const finished = await waitForRun(key, agent.id, sent.body.runKey);
    expect(finished.status).toBe("completed");

    const detail = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
    const { trace } = detail;
    expect(trace).toMatchObject({ reason: "userInitiated", steps: 2, model: "builtin:playbook", attempt: 1, resumed: false });
    expect(trace.toolCalls).toHaveLength(2);
    const [search, teleport] = trace.toolCalls;
    expect(search).toMatchObject({ name: "memory_search", step: 0, callIndex: 0, status: "completed", ok: true, code: null, riskLevel: "low" });
    expect(search.operationId).toMatch(/^[0-9a-f]{64}$/);
    expect(search.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(search.endedAt)).toBeGreaterThanOrEqual(Date.parse(search.startedAt));
    expect(teleport).toMatchObject({ name: "teleport", step: 0, callIndex: 1, status: "failed", ok: false, code: "unknown_tool" });
    // Tool calls in the view are the plans the run persisted, one per operationId.
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages?limit=200`, { key })).body.data;
    const planned = messages.filter((m: any) => m.kind === "action").map((m: any) => m.metadata.operationId).sort();
    expect(trace.toolCalls.map((call: any) => call.operationId).sort()).toEqual(planned);

    expect(Array.isArray(trace.policy)).toBe(true);
    expect(Array.isArray(trace.attempts)).toBe(true);
    expect(trace.tokens.input).toBeGreaterThan(0);
    expect(trace.tokens.output).toBeGreaterThan(0);
    expect(trace.tokens.total).toBe(trace.tokens.input + trace.tokens.output);
    expect(trace.usage).toMatchObject({ inputTokens: trace.tokens.input, outputTokens: trace.tokens.output, costMicros: trace.costMicros });
    expect(trace.costMicros).toBe(0);
    expect(trace.latencyMs).toBe(Date.parse(detail.endedAt) - Date.parse(detail.startedAt));
    expect(trace.children).toEqual([]);

    const listed = (await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data.find((run: any) => run.runKey === sent.body.runKey);
    expect(listed.trace).toMatchObject({ reason: "userInitiated", toolCallCount: 2, tokens: trace.tokens, costMicros: trace.costMicros, latencyMs: trace.latencyMs });
    expect(listed.trace.toolCalls).toBeUndefined();
    expect(listed.trace.policy).toBeUndefined();
  });

  it("documents the trace fields in the OpenAPI schema", async () => {
    const doc = (await api("GET", "/v1/openapi.json")).body;
    const trace = doc.components.schemas.Run.properties.trace;
    expect(trace.type).toBe("object");
    for (const field of ["toolCalls", "policy", "attempts", "tokens", "costMicros", "latencyMs", "children", "toolCallCount"]) expect(trace.description).toContain(field);
  });
});

describe("GET /v1/metrics completeness", () => {
  it("counts runs by outcome, wakes by reason, tool calls, tokens, cost, decisions requested/resolved and spawns", async () => {
    const { key } = await createTenant();
    const agent = await playbookAgent(key, { capabilities: { grant: ["spawn"] }, budgets: { tokens: 50_000 } });
    const ask = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool ask_user {"question":"Which day?","options":[{"id":"mon","label":"Monday"}]}' } });
    await waitForRun(key, agent.id, ask.body.runKey);
    const decision = (await api("GET", "/v1/decisions?status=pending", { key })).body.data.find((d: any) => d.agentId === agent.id);
    expect((await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "mon" } })).status).toBe(200);
    const spawn = await api("POST", `/v1/agents/${agent.id}/messages`, {
      key,
      body: { text: '/tool spawn_agent {"goal":"look around","requestedAgentKind":"helper","tokenBudget":100,"onComplete":"destroy_child_on_success"}\n/tool spawn_agent {"goal":"too much","requestedAgentKind":"helper","tokenBudget":100,"allowedTools":["create_task"]}' },
    });
    await waitForRun(key, agent.id, spawn.body.runKey);

    const text = await eventually(async () => {
      const body = (await api("GET", "/v1/metrics", { key })).body as string;
      return /^vigil_wakes_total\{reason="child"\} 1$/m.test(body) && /^vigil_wakes_total\{reason="toolResult"\} 1$/m.test(body) ? body : undefined;
    }, 20_000);
    for (const name of ["vigil_cost_micro_usd_total", "vigil_decisions_requested_total", "vigil_decisions_resolved_total", "vigil_spawns_total"]) {
      expect(text).toMatch(new RegExp(`# TYPE ${name} counter\\n`));
    }
    expect(text).toMatch(/^vigil_decisions_requested_total\{type="decision\/option"\} 1$/m);
    expect(text).toMatch(/^vigil_decisions_resolved_total\{type="decision\/option"\} 1$/m);
    expect(text).toMatch(/^vigil_spawns_total\{outcome="admitted"\} 1$/m);
    expect(text).toMatch(/^vigil_spawns_total\{outcome="denied"\} 1$/m);
    expect(text).toMatch(/^vigil_runs_total\{outcome="completed"\} \d+$/m);
    expect(text).toMatch(/^vigil_wakes_total\{reason="userInitiated"\} 2$/m);
    expect(text).toMatch(/^vigil_tool_calls_total [3-9]$/m);
    expect(text).toMatch(/^vigil_tokens_total\{direction="output"\} \d+$/m);
    for (const line of text.trim().split("\n").filter((l: string) => !l.startsWith("#"))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? \d+$/);
  });
});
