import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { eventually, LocalReceiver, raw, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

/** One span as the receiver decoded it: attributes flattened to a plain object. */
interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  status: { code?: number; message?: string };
  attributes: Record<string, string | number | boolean>;
}

interface Export {
  path: string;
  headers: IncomingHttpHeaders;
  contentType: string | undefined;
  resource: Record<string, string | number | boolean>;
  spans: DecodedSpan[];
  raw: string;
}

/** A real OTLP/HTTP receiver on 127.0.0.1 (JSON encoding): decodes ExportTraceServiceRequest bodies, answers `{}`. */
class OtlpReceiver extends LocalReceiver {
  readonly exports: Export[] = [];
  private flakyCalls = 0;

  protected answer(request: IncomingMessage, text: string, response: ServerResponse): void {
    if (request.method !== "POST" || request.headers["content-type"] !== "application/json") {
      response.statusCode = 415;
      response.end();
      return;
    }
    // `/flaky…` answers its first request 503 (Retry-After: 0), as an overloaded collector would.
    if (request.url?.startsWith("/flaky") && this.flakyCalls++ === 0) {
      response.statusCode = 503;
      response.setHeader("retry-after", "0");
      response.end();
      return;
    }
    const body = JSON.parse(text) as { resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
    for (const resourceSpans of body.resourceSpans) {
      this.exports.push({
        path: request.url ?? "/",
        headers: request.headers,
        contentType: request.headers["content-type"],
        resource: flatten(resourceSpans.resource.attributes),
        spans: resourceSpans.scopeSpans.flatMap((scope) => scope.spans.map(decodeSpan)),
        raw: text,
      });
    }
    response.setHeader("content-type", "application/json");
    response.end("{}");
  }

  forRun(runKey: string): Export | undefined {
    return this.exports.find((sent) => sent.spans.some((span) => span.parentSpanId === null && span.attributes["vigil.run_key"] === runKey));
  }
}

type OtlpAttribute = { key: string; value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean } };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano: string; endTimeUnixNano: string; status?: { code?: number; message?: string }; attributes: OtlpAttribute[] };

function flatten(attributes: OtlpAttribute[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue!));
  return out;
}

function decodeSpan(span: OtlpSpan): DecodedSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId ?? null,
    name: span.name,
    kind: span.kind,
    start: BigInt(span.startTimeUnixNano),
    end: BigInt(span.endTimeUnixNano),
    status: span.status ?? {},
    attributes: flatten(span.attributes),
  };
}

let server: VigilServer;
let receiver: OtlpReceiver;
let receiverUrl: string;

beforeAll(async () => {
  receiver = new OtlpReceiver();
  receiverUrl = await receiver.listen();
  server = sharedServer();
});

afterAll(async () => {
  await receiver?.close();
});

async function tenant(name: string) {
  const { apiKey } = await server.tenant(name);
  const call = (method: string, path: string, body?: unknown) =>
    raw<any>(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const categoryId = (await call("POST", "/v1/journal/categories", { name: "Gym" })).body.id as string;
  /** An orchestrator-mode agent whose playbook reads its categories and creates a task (a saga that waits for approval). */
  const agent = async () =>
    (
      await call("POST", "/v1/agents", {
        kind: "coach",
        displayName: "Traced",
        model: "builtin:playbook",
        controlMode: "orchestrator",
        allowedCategoryIds: [categoryId],
        playbook: {
          rules: [{ when: { reason: "userInitiated" }, tools: [{ name: "list_allowed_categories", args: {} }, { name: "create_task", args: { title: "Run 5k", categoryId } }], reply: "Planned: {{results.1.output.task.title}}" }],
        },
      })
    ).body.id as string;
  /** Sends a message, approves the call it waits on, and returns the finished run. */
  const runWithApproval = async (agentId: string, text: string) => {
    const sent = await call("POST", `/v1/agents/${agentId}/messages`, { text });
    expect(sent.status).toBe(202);
    const decision = await eventually(async () => (await call("GET", "/v1/decisions")).body.data.find((d: any) => d.status === "pending" && d.payload?.toolName === "create_task"), 30_000, 200);
    expect((await call("POST", `/v1/decisions/${decision.id}/resolve`, { resolutionType: "approve" })).status).toBe(200);
    const run = await eventually(async () => {
      const current = (await call("GET", `/v1/agents/${agentId}/runs/${sent.body.runKey}`)).body;
      return current.status === "completed" || current.status === "failed_terminal" ? current : null;
    }, 30_000, 200);
    return { run, runKey: sent.body.runKey as string };
  };
  return { call, categoryId, agent, runWithApproval };
}

describe("OpenTelemetry export of runs (OTLP/HTTP JSON to a local receiver)", () => {
  it("a run with a tool call and a saga arrives as one trace: run → steps → model calls → tool calls → saga phases, GenAI attributes, no bodies", async () => {
    const { call, agent, runWithApproval } = await tenant("otel");
    const secret = await call("POST", "/v1/providers/secrets", { provider: "otlp", apiKey: "authorization=Bearer%20otel-token,x-scope=vigil" });
    expect(secret.status).toBe(201);
    const put = await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${receiverUrl}/v1/traces`, headersSecretRefId: secret.body.id } });
    expect(put.status).toBe(200);
    expect(put.body.telemetry).toEqual({ otlpEndpoint: `${receiverUrl}/v1/traces`, headersSecretRefId: secret.body.id, includeBodies: false });
    expect(JSON.stringify((await call("GET", "/v1/policy")).body)).not.toContain("otel-token");

    const agentId = await agent();
    const { run, runKey } = await runWithApproval(agentId, "plan my week");
    expect(run.status).toBe("completed");
    const sent = await eventually(async () => receiver.forRun(runKey), 30_000, 200);

    expect(sent.path).toBe("/v1/traces");
    expect(sent.contentType).toBe("application/json");
    expect(sent.headers.authorization).toBe("Bearer otel-token");
    expect(sent.headers["x-scope"]).toBe("vigil");
    expect(sent.resource).toMatchObject({ "service.name": "vigil", "vigil.agent.id": agentId });
    const spans = sent.spans;
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: DecodedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
    // Every parent is in the trace, and every child lies within its parent's time.
    for (const span of spans) {
      if (span.parentSpanId === null) continue;
      const parent = parentOf(span);
      expect(parent, span.name).toBeDefined();
      expect(span.start >= parent!.start && span.end <= parent!.end, `${span.name} within ${parent!.name}`).toBe(true);
    }

    const root = spans.filter((span) => span.parentSpanId === null);
    expect(root).toHaveLength(1);
    expect(root[0]).toMatchObject({ name: "invoke_agent coach", attributes: expect.objectContaining({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": agentId, "vigil.run_key": runKey, "vigil.run.status": "completed" }) });
    const steps = spans.filter((span) => span.attributes["vigil.span.kind"] === "step");
    expect(steps.map((span) => span.name).sort()).toEqual(["step 0", "step 1"]);
    expect(steps.every((span) => span.parentSpanId === root[0]!.spanId)).toBe(true);

    const models = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(models).toHaveLength(2);
    for (const model of models) {
      expect(model.kind).toBe(3);
      expect(parentOf(model)!.attributes["vigil.span.kind"]).toBe("step");
      expect(model.attributes).toMatchObject({ "gen_ai.provider.name": "vigil.builtin", "gen_ai.system": "vigil.builtin", "gen_ai.request.model": "playbook", "vigil.run_key": runKey });
      expect(typeof model.attributes["gen_ai.usage.input_tokens"]).toBe("number");
      expect(typeof model.attributes["gen_ai.usage.output_tokens"]).toBe("number");
    }

    const tools = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(tools.map((span) => span.attributes["gen_ai.tool.name"]).sort()).toEqual(["create_task", "list_allowed_categories"]);
    expect(tools.every((span) => parentOf(span)!.name === "step 0")).toBe(true);
    const createTask = tools.find((span) => span.attributes["gen_ai.tool.name"] === "create_task")!;
    const operationId = createTask.attributes["vigil.operation_id"];
    expect(operationId).toMatch(/^[0-9a-f]{64}$/);
    const phases = spans.filter((span) => span.parentSpanId === createTask.spanId);
    expect(phases.map((span) => span.name)).toEqual(["saga approval", "saga phase1", "saga phase2"]);
    expect(phases.every((span) => span.attributes["vigil.operation_id"] === operationId && span.attributes["vigil.run_key"] === runKey)).toBe(true);
    expect(phases[0]!.attributes["vigil.approval.resolution"]).toBe("approve");

    // No bodies by default: neither the user's text, nor the tool's arguments or results, nor the reply.
    expect(sent.raw).not.toContain("plan my week");
    expect(sent.raw).not.toContain("Run 5k");
    expect(sent.raw).not.toContain("Planned:");
    expect(sent.raw).not.toMatch(/gen_ai\.(input|output)\.messages|gen_ai\.tool\.call\.(arguments|result)/);

    // The export is recorded on the run (spans, attempts, status).
    const recorded = await eventually(async () => (await call("GET", `/v1/agents/${agentId}/runs/${runKey}`)).body.trace.policy.find((p: any) => p.gate === "otlp"), 10_000, 200);
    expect(recorded).toMatchObject({ outcome: "allowed", detail: { spans: spans.length, droppedSpans: 0, attempts: 1, status: 200 } });
  });

  it("message texts, tool arguments and results travel only when the tenant opts in", async () => {
    const { call, agent, runWithApproval } = await tenant("otel-bodies");
    expect((await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${receiverUrl}/v1/traces`, includeBodies: true } })).status).toBe(200);
    const agentId = await agent();
    const { run, runKey } = await runWithApproval(agentId, "plan my week, with bodies");
    expect(run.status).toBe("completed");
    const sent = await eventually(async () => receiver.forRun(runKey), 30_000, 200);
    const spans = sent.spans;
    const firstModel = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat" && span.attributes["vigil.step"] === 0)!;
    expect(JSON.parse(String(firstModel.attributes["gen_ai.input.messages"]))).toEqual([{ role: "user", parts: [{ type: "text", content: "plan my week, with bodies" }] }]);
    const lastModel = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat" && span.attributes["vigil.step"] === 1)!;
    expect(JSON.parse(String(lastModel.attributes["gen_ai.output.messages"]))[0].parts[0].content).toBe("Planned: Run 5k");
    const createTask = spans.find((span) => span.attributes["gen_ai.tool.name"] === "create_task")!;
    expect(JSON.parse(String(createTask.attributes["gen_ai.tool.call.arguments"]))).toMatchObject({ title: "Run 5k" });
    expect(JSON.parse(String(createTask.attributes["gen_ai.tool.call.result"]))).toMatchObject({ ok: true });
  });

  it("a retryable answer (503) is retried and the trace arrives once", async () => {
    const { call, agent, runWithApproval } = await tenant("otel-flaky");
    expect((await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${receiverUrl}/flaky/v1/traces` } })).status).toBe(200);
    const agentId = await agent();
    const { runKey } = await runWithApproval(agentId, "plan my week");
    const recorded = await eventually(async () => (await call("GET", `/v1/agents/${agentId}/runs/${runKey}`)).body.trace.policy.find((p: any) => p.gate === "otlp"), 30_000, 200);
    expect(recorded).toMatchObject({ outcome: "allowed", detail: { attempts: 2, status: 200 } });
    expect(receiver.exports.filter((sent) => sent.path === "/flaky/v1/traces" && sent.spans.some((span) => span.attributes["vigil.run_key"] === runKey))).toHaveLength(1);
  });

  it("a dead collector neither slows nor fails a run: the export is retried a bounded number of times, then dropped and recorded", async () => {
    const { call, agent, runWithApproval } = await tenant("otel-dead");
    // A collector that is down: every connection is dropped as soon as it is made. The port stays held meanwhile (a
    // closed one could be taken over by another process of a busy CI machine, turning "unreachable" into an answer).
    const dead = createTcpServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    onTestFinished(() => new Promise<void>((resolve) => dead.close(() => resolve())));
    expect((await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${deadUrl}/v1/traces` } })).status).toBe(200);
    const agentId = await agent();
    const { run, runKey } = await runWithApproval(agentId, "plan my week");
    expect(run.status).toBe("completed");
    const messages = (await call("GET", `/v1/agents/${agentId}/messages`)).body.data;
    expect(messages.find((m: any) => m.kind === "assistant").text).toBe("Planned: Run 5k");
    const recorded = await eventually(async () => (await call("GET", `/v1/agents/${agentId}/runs/${runKey}`)).body.trace.policy.find((p: any) => p.gate === "otlp"), 30_000, 250);
    expect(recorded).toMatchObject({ outcome: "denied", code: "otlp_unreachable", detail: { attempts: 3, status: null } });
    // The next message is answered as usual while exports keep failing.
    const again = await runWithApproval(agentId, "and next week");
    expect(again.run.status).toBe("completed");
  });

  it("a collector that never answers does not hold up the agent: runs complete while the export waits, then it times out", async () => {
    const { call, agent, runWithApproval } = await tenant("otel-slow");
    const held: Array<() => void> = [];
    const slow = createServer((request, response) => {
      request.resume();
      held.push(() => response.destroy());
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      expect((await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1/traces` } })).status).toBe(200);
      const agentId = await agent();
      const first = await runWithApproval(agentId, "plan my week");
      expect(first.run.status).toBe("completed");
      await eventually(async () => held.length > 0, 30_000, 100);
      // The collector holds the first export open; the same agent answers the next message meanwhile.
      const second = await runWithApproval(agentId, "and next week");
      expect(second.run.status).toBe("completed");
      const recorded = await eventually(async () => (await call("GET", `/v1/agents/${agentId}/runs/${first.runKey}`)).body.trace.policy.find((p: any) => p.gate === "otlp"), 60_000, 500);
      expect(recorded).toMatchObject({ outcome: "denied", code: "otlp_timeout", detail: { attempts: 3 } });
    } finally {
      for (const release of held) release();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  it("an agent that ran before the telemetry policy was set exports its next run", async () => {
    const { call } = await tenant("otel-existing");
    const agentId = (await call("POST", "/v1/agents", { kind: "coach", displayName: "Existing" })).body.id as string;
    const turn = async (text: string) => {
      const sent = await call("POST", `/v1/agents/${agentId}/messages`, { text });
      expect(sent.status).toBe(202);
      const run = await eventually(async () => {
        const current = (await call("GET", `/v1/agents/${agentId}/runs/${sent.body.runKey}`)).body;
        return current.status === "completed" ? current : null;
      }, 30_000, 200);
      return run.runKey as string;
    };
    const before = await turn("before the policy");
    expect((await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${receiverUrl}/v1/traces` } })).status).toBe(200);
    const after = await turn("after the policy");
    const sent = await eventually(async () => receiver.forRun(after), 30_000, 200);
    expect(sent.resource).toMatchObject({ "vigil.agent.id": agentId });
    expect(receiver.forRun(before)).toBeUndefined();
  });

  it("a plain-http public collector and an unknown headers secret are refused at PUT time", async () => {
    const { call } = await tenant("otel-policy");
    const bad = await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: "http://collector.example.com/v1/traces" } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    const unknownSecret = await call("PUT", "/v1/policy", { telemetry: { otlpEndpoint: `${receiverUrl}/v1/traces`, headersSecretRefId: "ps_missing" } });
    expect(unknownSecret.status).toBe(400);
    expect(JSON.stringify(unknownSecret.body)).toContain("telemetry.headersSecretRefId");
  });
});
