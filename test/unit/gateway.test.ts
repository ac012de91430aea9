/**
 * The gateway's inference path in Node against a real HTTP server speaking the OpenAI protocol
 * (test/support/scripted-openai.ts), through the real `ai` SDK providers. The tenant's grant is the
 * only stand-in (its RPC is covered by the e2e suite); the bytes on the wire are real.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { completeText } from "../../src/gateway/complete-text";
import { infer, type GrantSource, type InferenceContext, type TraceSink } from "../../src/gateway/gateway";
import type { AttemptEntry, PolicyEntry, UsageEntry } from "../../src/core/runtime/run-trace-entries";
import type { Agent } from "../../src/schema/agents/agents";
import type { InferenceGrant, ProviderEndpoint } from "../../src/schema/admin/policy";
import { reply, ScriptedOpenAI } from "../support/scripted-openai";
import { builtinModel, EMPTY_WAKE } from "../../src/gateway/resolve";
import { callModel } from "../../src/gateway/call-model";
import { jsonSchema, tool, type ModelMessage } from "ai";

let server: ScriptedOpenAI;
let other: ScriptedOpenAI;

beforeAll(async () => {
  server = await ScriptedOpenAI.start();
  other = await ScriptedOpenAI.start();
});
afterAll(async () => {
  await server.close();
  await other.close();
});
beforeEach(() => {
  server.reset();
  other.reset();
});

function endpoint(overrides: Partial<ProviderEndpoint> = {}): ProviderEndpoint {
  return {
    id: "local",
    kind: "openai-compatible",
    baseUrl: server.baseUrl,
    policyVersion: "v1",
    models: ["m1", "m2"],
    pricing: { m1: { inputUsdPerMTok: 1, outputUsdPerMTok: 2 } },
    timeoutMs: 5_000,
    ...overrides,
  };
}

function agent(config: Partial<Agent["config"]> = {}, allowedCategoryIds: string[] = []): Agent {
  return {
    id: "a1",
    kind: "coach",
    displayName: "A",
    lifecycle: "active",
    mode: "hybrid",
    allowedCategoryIds,
    config: { modelId: "openai-compatible:local/m1", capabilities: null, instructions: null, playbook: null, modelOptions: {}, fallbackModels: [], controlMode: "adaptive", budgets: null, lineage: null, doubleTexting: "enqueue", ...config },
    version: 1,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
  };
}

class Recorder implements TraceSink {
  attempts: AttemptEntry[] = [];
  policies: PolicyEntry[] = [];
  usages: UsageEntry[] = [];
  attempt(_runKey: string, entry: AttemptEntry) {
    this.attempts.push(entry);
  }
  policy(_runKey: string, entry: PolicyEntry) {
    this.policies.push(entry);
  }
  usage(_runKey: string, entry: UsageEntry) {
    this.usages.push(entry);
  }
}

/** Grants every model on the given endpoints (key "sk-test"), or refuses with `deny`. */
function grants(endpoints: ProviderEndpoint[], deny?: { code: string; message: string }): GrantSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async inferenceGrant({ modelId }) {
      calls.push(modelId);
      if (deny) return { ok: false, code: deny.code as never, message: deny.message };
      const [, rest] = modelId.split(":") as [string, string];
      const [id, model] = rest.split("/") as [string, string];
      const found = endpoints.find((e) => e.id === id);
      if (!found) return { ok: false, code: "provider_not_allowed", message: `no endpoint ${id}` };
      const grant: InferenceGrant = { endpoint: found, model, apiKey: "sk-test" };
      return { ok: true, grant };
    },
  };
}

function context(overrides: Partial<InferenceContext> & { trace?: { runKey: string; sink: TraceSink } } = {}): InferenceContext & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    env: { VIGIL_FAULTS: "enabled", VIGIL_MODE: "local" },
    agent: agent(),
    wake: EMPTY_WAKE,
    purpose: "run_step",
    grants: grants([endpoint()]),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    sleeps,
    ...overrides,
  };
}

const hello = { system: "be brief", messages: [{ role: "user" as const, content: "hello" }] };

describe("model gateway", () => {
  it("streams deltas, sends the decrypted key only to the endpoint, and records usage and cost", async () => {
    server.enqueue(reply.text(["Hel", "lo ", "there"], { prompt_tokens: 1000, completion_tokens: 500 }));
    const trace = new Recorder();
    const deltas: string[] = [];
    const out = await infer(context({ trace: { runKey: "r1", sink: trace } }), { ...hello, onDelta: (d) => deltas.push(d) });
    expect(out).toMatchObject({ text: "Hello there", modelId: "openai-compatible:local/m1", usage: { inputTokens: 1000, outputTokens: 500 }, costMicros: 2000 });
    expect(deltas).toEqual(["Hel", "lo ", "there"]);
    expect(server.requestCount).toBe(1);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(server.requests[0]!.json).toMatchObject({ model: "m1", stream: true, stream_options: { include_usage: true }, messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }] });
    expect(trace.attempts).toEqual([expect.objectContaining({ provider: "local", model: "m1", attempt: 1, outcome: "succeeded", status: 200 })]);
    expect(trace.usages).toEqual([{ provider: "local", model: "m1", inputTokens: 1000, outputTokens: 500, costMicros: 2000 }]);
    // The request itself is recorded on the run by the egress door: host, method, status, duration.
    expect(trace.policies).toEqual([
      expect.objectContaining({ gate: "inference", outcome: "allowed" }),
      expect.objectContaining({ gate: "egress", outcome: "allowed", subject: new URL(server.baseUrl).host, detail: expect.objectContaining({ purpose: "run_step", method: "POST", outcome: "sent", status: 200, redirects: 0 }) }),
    ]);
  });

  it("returns streamed tool calls", async () => {
    server.enqueue(reply.toolCall("create_task", { title: "Squats" }));
    const tools = { create_task: tool({ description: "make a task", inputSchema: jsonSchema({ type: "object", properties: { title: { type: "string" } } }) }) };
    const out = await infer(context(), { ...hello, tools });
    expect(out.toolCalls).toEqual([{ toolCallId: "call_1", toolName: "create_task", input: { title: "Squats" } }]);
    expect(server.requests[0]!.json?.tools).toEqual([{ type: "function", function: { name: "create_task", description: "make a task", parameters: { type: "object", properties: { title: { type: "string" } } } } }]);
  });

  it("builds a tool offer given as a function once, only for a model that reads tools; builtin:echo answers the same without it", async () => {
    const createTask = () => ({ create_task: tool({ description: "make a task", inputSchema: jsonSchema({ type: "object", properties: { title: { type: "string" } } }) }) });
    const built: string[] = [];
    const offer = (label: string) => async () => {
      built.push(label);
      return createTask();
    };
    // echo: the same output as with the tool set handed over eagerly, and the builder never called.
    const echo = context({ agent: agent({ modelId: "builtin:echo" }) });
    const lazy: string[] = [];
    const eager: string[] = [];
    const lazyOut = await infer(echo, { ...hello, tools: offer("echo"), onDelta: (d) => lazy.push(d) });
    const eagerOut = await infer(echo, { ...hello, tools: createTask(), onDelta: (d) => eager.push(d) });
    expect(lazyOut).toEqual(eagerOut);
    expect(lazy).toEqual(eager);
    expect(lazyOut.text).toBe("echo: hello");
    expect(built).toEqual([]);
    // What the gateway skips changes nothing for echo: the model itself, offered the tools or none, streams the same.
    const call = async (tools: ReturnType<typeof createTask> | Record<string, never>) => {
      const deltas: string[] = [];
      const out = await callModel({ model: builtinModel("builtin:echo", agent({ modelId: "builtin:echo" }), EMPTY_WAKE)!, system: hello.system, messages: hello.messages, tools, onDelta: (d) => deltas.push(d) });
      return { out, deltas };
    };
    expect(await call({})).toEqual(await call(createTask()));
    expect((await call({})).out).toEqual({ text: lazyOut.text, toolCalls: lazyOut.toolCalls, usage: lazyOut.usage });
    // playbook reads the offer: built once, and its tool call comes back as with the eager set.
    const playbook = context({ agent: agent({ modelId: "builtin:playbook", playbook: { rules: [{ when: { reason: "manual" }, tools: [{ name: "create_task", args: { title: "Squats" } }] }] } as never }) });
    const fromOffer = await infer(playbook, { ...hello, tools: offer("playbook") });
    expect(fromOffer).toEqual(await infer(playbook, { ...hello, tools: createTask() }));
    expect(fromOffer.toolCalls).toEqual([{ toolCallId: "call_0", toolName: "create_task", input: { title: "Squats" } }]);
    expect(built).toEqual(["playbook"]);
    // A remote model retried after a failure: the offer is still built once, and sent on every attempt.
    server.enqueue(reply.error(500), reply.text(["ok"]));
    const remote = await infer(context(), { ...hello, tools: offer("remote") });
    expect(remote.text).toBe("ok");
    expect(built).toEqual(["playbook", "remote"]);
    expect(server.requests.map((request) => (request.json?.tools as Array<{ function: { name: string } }> | undefined)?.[0]?.function.name)).toEqual(["create_task", "create_task"]);
  });

  it("builtin:echo read past the SDK's call pipeline streams the same deltas, text and usage as through it", async () => {
    const echo = builtinModel("builtin:echo", agent({ modelId: "builtin:echo" }), EMPTY_WAKE)!;
    const prompts: Array<{ system: string | null; messages: ModelMessage[] }> = [
      { system: null, messages: [{ role: "user", content: "hello" }] },
      { system: "be brief", messages: [{ role: "user", content: "first" }, { role: "assistant", content: "echo: first" }, { role: "user", content: [{ type: "text", text: "two " }, { type: "text", text: "parts — ünïcödé" }] }] },
      {
        system: "tools ran",
        messages: [
          { role: "user", content: "make a task" },
          { role: "assistant", content: [{ type: "text", text: "on it" }, { type: "tool-call", toolCallId: "c1", toolName: "create_task", input: { title: "Squats" } }] },
          { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "create_task", output: { type: "json", value: { ok: true, id: "t1" } } }] },
        ],
      },
    ];
    for (const prompt of prompts) {
      const run = async (direct: boolean) => {
        const deltas: string[] = [];
        const out = await callModel({ model: echo, system: prompt.system, messages: prompt.messages, tools: {}, onDelta: (d) => deltas.push(d), direct });
        return { out, deltas };
      };
      const viaSdk = await run(false);
      expect(await run(true)).toEqual(viaSdk);
      expect(viaSdk.out.usage.inputTokens).toBeGreaterThan(0);
    }
    // Through the gateway, echo takes the direct path; the answer is the SDK path's.
    const deltas: string[] = [];
    const out = await infer(context({ agent: agent({ modelId: "builtin:echo" }) }), { ...hello, onDelta: (d) => deltas.push(d) });
    const viaSdk = await callModel({ model: echo, system: hello.system, messages: hello.messages, tools: {}, onDelta: () => undefined });
    expect({ text: out.text, toolCalls: out.toolCalls, usage: out.usage }).toEqual(viaSdk);
    expect(deltas.join("")).toBe(viaSdk.text);
  });

  it("returns a tool call whose arguments break the tool's schema, so the run loop can refuse it in the open", async () => {
    server.enqueue(reply.toolCall("create_task", { title: 5 }));
    const tools = { create_task: tool({ description: "make a task", inputSchema: jsonSchema({ type: "object", properties: { title: { type: "string" } }, required: ["title"] }) }) };
    const out = await infer(context(), { ...hello, tools });
    expect(out.toolCalls).toHaveLength(1);
    expect(out.toolCalls[0]).toMatchObject({ toolCallId: "call_1", toolName: "create_task" });
  });

  it("treats a stream cut off before its finish as a bad answer, not an empty one", async () => {
    const cut = reply.text(["half", " an answer"]);
    server.enqueue({ chunks: cut.chunks!.slice(0, 3) }, reply.text(["never"]));
    await expect(infer(context(), hello)).rejects.toMatchObject({ code: "provider_error", detail: { failureKind: "invalid_response" } });
  });

  it("retries 429, 429 then succeeds, with backoff on the timeline", async () => {
    server.enqueue(reply.error(429), reply.error(429), reply.text(["ok"]));
    const trace = new Recorder();
    const ctx = context({ trace: { runKey: "r2", sink: trace } });
    expect((await infer(ctx, hello)).text).toBe("ok");
    expect(server.requestCount).toBe(3);
    expect(trace.attempts.map((a) => [a.attempt, a.outcome, a.status])).toEqual([
      [1, "retrying", 429],
      [2, "retrying", 429],
      [3, "succeeded", 200],
    ]);
    expect(ctx.sleeps).toEqual(trace.attempts.slice(0, 2).map((a) => a.backoffMs));
    expect(ctx.sleeps[0]).toBeGreaterThanOrEqual(250);
    expect(ctx.sleeps[1]).toBeGreaterThanOrEqual(500);
  });

  it("retries a dropped connection and honours Retry-After", async () => {
    server.enqueue({ dropConnection: true }, reply.error(429, { "retry-after": "2" }), reply.text(["fine"]));
    const trace = new Recorder();
    const ctx = context({ trace: { runKey: "r3", sink: trace } });
    expect((await infer(ctx, hello)).text).toBe("fine");
    expect(trace.attempts.map((a) => [a.outcome, a.errorCode])).toEqual([
      ["retrying", "connection_failure"],
      ["retrying", "rate_limited"],
      ["succeeded", undefined],
    ]);
    expect(ctx.sleeps[1]).toBe(2000);
  });

  it("moves to the configured fallback after three 429s; the fallback passes the gate itself", async () => {
    server.enqueue(reply.error(429), reply.error(429), reply.error(429), reply.text(["from m2"]));
    const trace = new Recorder();
    const source = grants([endpoint()]);
    const ctx = context({ agent: agent({ fallbackModels: ["openai-compatible:local/m2"] }), grants: source, trace: { runKey: "r4", sink: trace } });
    const out = await infer(ctx, hello);
    expect(out).toMatchObject({ text: "from m2", modelId: "openai-compatible:local/m2" });
    expect(source.calls).toEqual(["openai-compatible:local/m1", "openai-compatible:local/m2"]);
    expect(server.requests.map((r) => r.json?.model)).toEqual(["m1", "m1", "m1", "m2"]);
    expect(trace.attempts.map((a) => [a.model, a.outcome])).toEqual([
      ["m1", "retrying"],
      ["m1", "retrying"],
      ["m1", "retries_exhausted"],
      ["m2", "succeeded"],
    ]);
  });

  it("fails fast on 401 without retrying, and ends with provider_error when no fallback is left", async () => {
    server.enqueue(reply.error(401), reply.text(["never"]));
    const trace = new Recorder();
    await expect(infer(context({ trace: { runKey: "r5", sink: trace } }), hello)).rejects.toMatchObject({ code: "provider_error", detail: { failureKind: "auth_failure", status: 401 } });
    expect(server.requestCount).toBe(1);
    expect(trace.attempts).toEqual([expect.objectContaining({ outcome: "fail_fast_aborted", status: 401 })]);
  });

  it("fails fast on a malformed answer", async () => {
    server.enqueue({ raw: "this is not a stream" }, reply.text(["never"]));
    await expect(infer(context(), hello)).rejects.toMatchObject({ code: "provider_error", detail: { failureKind: "invalid_response" } });
    expect(server.requestCount).toBe(1);
  });

  it("sends nothing when the tenant's grant is refused, and records the denial", async () => {
    for (const code of ["provider_not_allowed", "model_not_allowed", "privacy_confirmation_required", "secret_unavailable"]) {
      const trace = new Recorder();
      await expect(infer(context({ grants: grants([endpoint()], { code, message: `denied: ${code}` }), trace: { runKey: "r6", sink: trace } }), hello)).rejects.toMatchObject({ code, stage: "grant" });
      expect(trace.policies).toEqual([expect.objectContaining({ gate: "inference.grant", outcome: "denied", code })]);
    }
    expect(server.requestCount).toBe(0);
  });

  it("refuses context data outside the agent's categories before asking for a grant", async () => {
    const source = grants([endpoint()]);
    const messages = [{ role: "user" as const, content: `[runtime observation]\n${JSON.stringify({ task: { id: "t1", categoryId: "finance" } })}` }];
    await expect(infer(context({ agent: agent({}, ["gym"]), grants: source }), { system: null, messages })).rejects.toMatchObject({ code: "out_of_scope" });
    expect(source.calls).toEqual([]);
    expect(server.requestCount).toBe(0);
  });

  it("blocks an overshared payload at the final guard: nothing is sent", async () => {
    server.enqueue(reply.text(["never"]));
    const trace = new Recorder();
    const ctx = context({ env: { VIGIL_FAULTS: "enabled", VIGIL_MODE: "local", VIGIL_FAULT_OVERSHARE: "local" }, trace: { runKey: "r7", sink: trace } });
    await expect(infer(ctx, hello)).rejects.toMatchObject({ code: "overshared_payload_blocked", detail: { fields: ["vigil_debug_context.note"] } });
    expect(server.requestCount).toBe(0);
    expect(trace.policies.at(-1)).toMatchObject({ gate: "need_to_know", outcome: "denied", code: "overshared_payload_blocked" });
  });

  it("reaches only the granted endpoint's host: a redirect to another host is network_denied", async () => {
    server.enqueue(reply.redirect(`${other.baseUrl}/chat/completions`));
    other.enqueue(reply.text(["never"]));
    await expect(infer(context(), hello)).rejects.toMatchObject({ code: "network_denied" });
    expect(server.requestCount).toBe(1);
    expect(other.requestCount).toBe(0);
  });

  it("refuses plain http to loopback in deployed mode (VIGIL_MODE absent), naming the mode", async () => {
    await expect(infer(context({ env: { VIGIL_FAULTS: "enabled" } }), hello)).rejects.toMatchObject({ code: "network_denied", message: expect.stringMatching(/deployed mode/) });
    expect(server.requestCount).toBe(0);
  });

  it("times an attempt out at the endpoint's timeoutMs and retries it", async () => {
    server.enqueue({ ...reply.text(["late"]), delayMs: 1_500 }, reply.text(["on time"]));
    const trace = new Recorder();
    const ctx = context({ grants: grants([endpoint({ timeoutMs: 200 })]), trace: { runKey: "r8", sink: trace } });
    expect((await infer(ctx, hello)).text).toBe("on time");
    expect(trace.attempts.map((a) => [a.outcome, a.errorCode])).toEqual([
      ["retrying", "timeout"],
      ["succeeded", undefined],
    ]);
  });

  it("speaks each provider kind's protocol to the endpoint's host only", async () => {
    for (const kind of ["openai", "workers-ai"] as const) {
      server.reset();
      server.enqueue(reply.text(["hi from ", kind]));
      const ep = endpoint({ id: kind, kind });
      const out = await infer(context({ agent: agent({ modelId: `${kind}:m1` }), grants: { inferenceGrant: async () => ({ ok: true, grant: { endpoint: ep, model: "m1", apiKey: "sk-kind" } }) } }), hello);
      expect(out.text).toBe(`hi from ${kind}`);
      expect(server.requests[0]).toMatchObject({ path: "/v1/chat/completions", headers: { authorization: "Bearer sk-kind" } });
    }
    // Anthropic's Messages API: the bytes handed to the network, after projection, pass the guard.
    const seen: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
    const edge: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), headers: init?.headers as Record<string, string>, body: String(init?.body) });
      return new Response(JSON.stringify({ type: "error", error: { type: "authentication_error", message: "no" } }), { status: 401, headers: { "content-type": "application/json" } });
    };
    const anthropic = endpoint({ id: "anthropic", kind: "anthropic", baseUrl: undefined });
    const tools = { create_task: tool({ description: "make a task", inputSchema: jsonSchema({ type: "object", properties: { title: { type: "string" } } }) }) };
    const ctx = context({ agent: agent({ modelId: "anthropic:claude-x" }), fetch: edge, grants: { inferenceGrant: async () => ({ ok: true, grant: { endpoint: anthropic, model: "claude-x", apiKey: "sk-ant" } }) } });
    await expect(infer(ctx, { ...hello, tools })).rejects.toMatchObject({ code: "provider_error", detail: { status: 401 } });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe("https://api.anthropic.com/v1/messages");
    expect(seen[0]!.headers["x-api-key"]).toBe("sk-ant");
    const body = JSON.parse(seen[0]!.body);
    expect(body).toMatchObject({ model: "claude-x", system: [{ type: "text", text: "be brief" }], messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }] });
    expect(body.tools[0]).toEqual({ name: "create_task", description: "make a task", input_schema: { type: "object", properties: { title: { type: "string" } } } });
  });

  it("completeText answers without tools, and reports rate_limited when retries end on 429", async () => {
    const base = { env: { VIGIL_FAULTS: "enabled", VIGIL_MODE: "local" }, agent: agent(), purpose: "compaction", system: "summarize", messages: hello.messages, grants: grants([endpoint()]) };
    server.enqueue(reply.text(["sum", "mary"], { prompt_tokens: 10, completion_tokens: 2 }));
    expect(await completeText(base)).toEqual({ text: "summary", usage: { inputTokens: 10, outputTokens: 2, costMicros: 14 } });
    expect(server.requests[0]!.json?.tools).toBeUndefined();
    server.enqueue(reply.error(429), reply.error(429), reply.error(429));
    await expect(completeText({ ...base, sleep: async () => undefined })).rejects.toMatchObject({ code: "rate_limited" });
    expect(server.requestCount).toBe(4);
    await expect(completeText({ ...base, grants: grants([endpoint()], { code: "privacy_confirmation_required", message: "confirm first" }) })).rejects.toMatchObject({ code: "privacy_confirmation_required" });
    expect(server.requestCount).toBe(4);
    expect(await completeText({ ...base, agent: agent({ modelId: "builtin:echo" }) })).toMatchObject({ text: "echo: hello" });
  });
});
