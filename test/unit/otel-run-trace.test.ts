import { describe, expect, it } from "vitest";
import { guardOtlpBytes } from "../../src/core/egress/need-to-know-otlp";
import { buildRunTrace, spanIdOf, traceIdOf, type RunTraceSource } from "../../src/core/egress/otel-run-trace";
import { encodeOtlpTraces } from "../../src/core/egress/otlp-json";
import { parseOtlpHeaders } from "../../src/core/egress/otlp-headers";
import { checkPolicy } from "../../src/core/governance/policy-rules";
import { PolicyBody } from "../../src/schema/admin/policy";

const RUN_KEY = "a".repeat(64);
const OP = "b".repeat(64);
const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 9, 0, 0) + ms).toISOString();

function source(overrides: Partial<RunTraceSource> = {}): RunTraceSource {
  return {
    agent: { id: "ag_1", kind: "coach", modelId: "builtin:playbook" },
    run: { runKey: RUN_KEY, reason: "userInitiated", threadId: "ag_1:session:s1", status: "completed", errorCode: null, enqueuedAt: at(0), startedAt: at(5), endedAt: at(900) },
    rows: [
      { kind: "attempt", data: { provider: "builtin", model: "playbook", attempt: 1, outcome: "succeeded", status: null, durationMs: 10, step: 0 }, createdAt: at(20) },
      { kind: "usage", data: { provider: "builtin", model: "playbook", inputTokens: 12, outputTokens: 3, costMicros: 0, step: 0 }, createdAt: at(20) },
      { kind: "saga", data: { operationId: OP, phase: "started", approval: true }, createdAt: at(30) },
      { kind: "saga", data: { operationId: OP, phase: "approval_resolved", outcome: "approve" }, createdAt: at(400) },
      { kind: "saga", data: { operationId: OP, phase: "recorded", durationMs: 4 }, createdAt: at(604) },
      { kind: "attempt", data: { provider: "builtin", model: "playbook", attempt: 1, outcome: "succeeded", status: null, durationMs: 7, step: 1 }, createdAt: at(620) },
      { kind: "usage", data: { provider: "builtin", model: "playbook", inputTokens: 20, outputTokens: 5, costMicros: 0, step: 1 }, createdAt: at(620) },
    ],
    actions: [
      {
        operationId: OP,
        step: 0,
        callIndex: 0,
        toolCallId: "call_1",
        toolName: "create_task",
        riskLevel: "medium",
        status: "completed",
        args: { title: "secret plan" },
        result: { ok: true, output: { id: "task_1" } },
        createdAt: at(25),
        updatedAt: at(604),
      },
    ],
    ...overrides,
  };
}

const LIMITS = { maxSpans: 512, maxBodyChars: 4096 };

describe("a run as an OpenTelemetry trace", () => {
  it("nests run → steps → model calls and tool calls → saga phases, with ids derived from the runKey", () => {
    const trace = buildRunTrace(source(), LIMITS);
    expect(trace.traceId).toBe(traceIdOf(RUN_KEY));
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    const byName = new Map(trace.spans.map((span) => [span.name, span]));
    const run = byName.get("invoke_agent coach")!;
    expect(run.parentSpanId).toBeNull();
    expect(run.spanId).toBe(spanIdOf(RUN_KEY, "run"));
    expect(byName.get("step 0")!.parentSpanId).toBe(run.spanId);
    expect(byName.get("step 1")!.parentSpanId).toBe(run.spanId);
    const models = trace.spans.filter((span) => span.kind === "model_call");
    expect(models.map((span) => span.parentSpanId)).toEqual([spanIdOf(RUN_KEY, "step", 0), spanIdOf(RUN_KEY, "step", 1)]);
    expect(models[0]!.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "vigil.builtin", "gen_ai.system": "vigil.builtin", "gen_ai.request.model": "playbook", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3 });
    const tool = byName.get("execute_tool create_task")!;
    expect(tool.parentSpanId).toBe(spanIdOf(RUN_KEY, "step", 0));
    expect(tool.attributes).toMatchObject({ "vigil.operation_id": OP, "vigil.run_key": RUN_KEY, "gen_ai.tool.name": "create_task", "gen_ai.tool.call.id": "call_1" });
    const phases = trace.spans.filter((span) => span.kind === "saga_phase");
    expect(phases.map((span) => span.name)).toEqual(["saga approval", "saga phase1", "saga phase2"]);
    expect(phases.every((span) => span.parentSpanId === tool.spanId && span.attributes["vigil.operation_id"] === OP)).toBe(true);
    expect(phases.map((span) => [span.startMs, span.endMs].map((ms) => ms - Date.parse(at(0))))).toEqual([[30, 400], [400, 600], [600, 604]]);
    expect(run.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 32, "gen_ai.usage.output_tokens": 8, "vigil.run.status": "completed" });
    // The same run exported twice is the same trace.
    expect(buildRunTrace(source(), LIMITS)).toEqual(trace);
  });

  it("carries no message text, tool arguments or results unless bodies are opted in, and the guard agrees", () => {
    const plain = encodeOtlpTraces(buildRunTrace(source(), LIMITS), { tenantId: "t_1", agentId: "ag_1" });
    expect(plain).not.toContain("secret plan");
    expect(guardOtlpBytes(plain, false)).toEqual({ ok: true });

    const withBodies = encodeOtlpTraces(buildRunTrace(source({ bodies: { input: "hello there", replies: new Map([[1, "done"]]) } }), LIMITS), { tenantId: "t_1", agentId: "ag_1" });
    expect(withBodies).toContain("secret plan");
    expect(withBodies).toContain("hello there");
    expect(guardOtlpBytes(withBodies, true)).toEqual({ ok: true });
    // The same bytes are refused where the tenant did not opt in.
    const refused = guardOtlpBytes(withBodies, false);
    expect(refused).toMatchObject({ ok: false, code: "overshared_payload_blocked" });
    expect(refused.ok ? [] : refused.violations).toEqual(expect.arrayContaining(["tool_call:gen_ai.tool.call.arguments", "model_call:gen_ai.input.messages"]));
  });

  it("refuses an attribute or field no allowlist names", () => {
    const body = JSON.parse(encodeOtlpTraces(buildRunTrace(source(), LIMITS), { tenantId: "t_1", agentId: "ag_1" }));
    body.resourceSpans[0].scopeSpans[0].spans[0].attributes.push({ key: "user.email", value: { stringValue: "x@example.com" } });
    body.resourceSpans[0].scopeSpans[0].spans[0].events = [{ name: "leak" }];
    const guard = guardOtlpBytes(JSON.stringify(body), true);
    expect(guard.ok ? [] : guard.violations).toEqual(["resourceSpans[].scopeSpans[].spans[].events[].name", "run:user.email"]);
  });

  it("encodes OTLP/HTTP JSON: hex ids, integer enums, nanosecond strings", () => {
    const body = JSON.parse(encodeOtlpTraces(buildRunTrace(source(), LIMITS), { tenantId: "t_1", agentId: "ag_1" }));
    const span = body.resourceSpans[0].scopeSpans[0].spans.find((s: { name: string }) => s.name === "chat playbook");
    expect(span).toMatchObject({ kind: 3, status: { code: 1 }, startTimeUnixNano: (BigInt(Date.parse(at(10))) * 1_000_000n).toString() });
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.attributes).toContainEqual({ key: "gen_ai.usage.input_tokens", value: { intValue: "12" } });
    expect(body.resourceSpans[0].resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "vigil" } });
  });

  it("drops spans over the per-run limit and counts them, keeping the run span", () => {
    const trace = buildRunTrace(source(), { maxSpans: 2, maxBodyChars: 10 });
    expect(trace.spans).toHaveLength(2);
    expect(trace.spans[0]!.kind).toBe("run");
    expect(trace.dropped).toBe(7);
  });

  it("a rejected approval has no phase 1", () => {
    const rejected = source({
      rows: [
        { kind: "saga", data: { operationId: OP, phase: "started", approval: true }, createdAt: at(30) },
        { kind: "saga", data: { operationId: OP, phase: "approval_resolved", outcome: "rejected" }, createdAt: at(400) },
        { kind: "saga", data: { operationId: OP, phase: "recorded", durationMs: 1 }, createdAt: at(401) },
      ],
      actions: [{ ...source().actions[0]!, status: "failed", result: { ok: false, code: "rejected" } }],
    });
    const trace = buildRunTrace(rejected, LIMITS);
    expect(trace.spans.filter((span) => span.kind === "saga_phase").map((span) => span.name)).toEqual(["saga approval", "saga phase2"]);
    expect(trace.spans.find((span) => span.kind === "tool_call")!.status).toEqual({ code: "error", message: "rejected" });
  });
});

describe("the telemetry policy", () => {
  const context = (mode: "local" | "deployed") => ({ secretProviders: new Map([["ps_otlp", "otlp"], ["ps_openai", "openai"]]), mode });
  const body = (telemetry: Record<string, unknown>) => PolicyBody.parse({ telemetry });

  it("takes http to loopback in local mode and https only when deployed", () => {
    expect(checkPolicy(body({ otlpEndpoint: "http://127.0.0.1:4318/v1/traces" }), context("local"))).toEqual([]);
    expect(checkPolicy(body({ otlpEndpoint: "http://127.0.0.1:4318/v1/traces" }), context("deployed"))).toEqual([expect.objectContaining({ path: "telemetry.otlpEndpoint" })]);
    expect(checkPolicy(body({ otlpEndpoint: "http://collector.example.com/v1/traces" }), context("local"))).toEqual([expect.objectContaining({ path: "telemetry.otlpEndpoint" })]);
    expect(checkPolicy(body({ otlpEndpoint: "https://collector.example.com/v1/traces" }), context("deployed"))).toEqual([]);
    expect(body({ otlpEndpoint: "https://collector.example.com/v1/traces" }).telemetry?.includeBodies).toBe(false);
  });

  it("takes a headers secret only if it was stored for provider otlp", () => {
    const endpoint = "https://collector.example.com/v1/traces";
    expect(checkPolicy(body({ otlpEndpoint: endpoint, headersSecretRefId: "ps_otlp" }), context("deployed"))).toEqual([]);
    expect(checkPolicy(body({ otlpEndpoint: endpoint, headersSecretRefId: "ps_openai" }), context("deployed"))).toEqual([expect.objectContaining({ path: "telemetry.headersSecretRefId" })]);
    expect(checkPolicy(body({ otlpEndpoint: endpoint, headersSecretRefId: "ps_gone" }), context("deployed"))).toEqual([expect.objectContaining({ path: "telemetry.headersSecretRefId" })]);
  });

  it("reads headers in the OTEL_EXPORTER_OTLP_HEADERS format", () => {
    expect(parseOtlpHeaders("Authorization=Bearer%20abc, x-tenant = t1")).toEqual({ ok: true, headers: { authorization: "Bearer abc", "x-tenant": "t1" } });
    expect(parseOtlpHeaders("no-equals-sign")).toMatchObject({ ok: false });
    expect(parseOtlpHeaders("content-type=text/plain")).toMatchObject({ ok: false });
    expect(parseOtlpHeaders("x=%0d%0aevil: 1")).toMatchObject({ ok: false });
  });
});
