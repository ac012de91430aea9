/**
 * The model gateway end to end: a real `wrangler dev` talks to scripted OpenAI-compatible servers
 * on 127.0.0.1 through the tenant's policy, stored secret and privacy receipts (set up over the
 * public API). Assertions are on what the servers actually received.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent, Run, VigilClient } from "../../src/client";
import { reply, ScriptedOpenAI } from "../support/scripted-openai";
import type { VigilServer } from "./harness";
import { sharedSeamsServer } from "./shared-server";

let server: VigilServer;
let providerA: ScriptedOpenAI;
let providerB: ScriptedOpenAI;

beforeAll(async () => {
  [providerA, providerB] = await Promise.all([ScriptedOpenAI.start(), ScriptedOpenAI.start()]);
  // `leaky` endpoints get a field injected after the projection (test seam): the final guard must catch it.
  server = sharedSeamsServer();
});
afterAll(async () => {
  await providerA?.close();
  await providerB?.close();
});
beforeEach(() => {
  providerA.reset();
  providerB.reset();
});

const POLICY_VERSION = "2026-11";

interface Tenant {
  client: VigilClient;
  apiKey: string;
  secretId: string;
  call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

/** A tenant whose policy allows endpoint `id` (models m1, m2) at `baseUrl`, with a stored key and receipts for `consent`. */
async function tenant(options: { id?: string; baseUrl?: string; consent?: string[]; categoryModels?: Record<string, string[]> } = {}): Promise<Tenant & { providerKey: string }> {
  const { client, apiKey } = await server.tenant(`gw-${randomBytes(4).toString("hex")}`);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await client.send(method, path, body);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const id = options.id ?? "local";
  const providerKey = `sk-e2e-${randomBytes(8).toString("hex")}`;
  const secret = await call("POST", "/v1/providers/secrets", { provider: id, apiKey: providerKey });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  expect(JSON.stringify(secret.body)).not.toContain(providerKey);
  const policy = await call("PUT", "/v1/policy", {
    providers: [
      {
        id,
        kind: "openai-compatible",
        baseUrl: options.baseUrl ?? providerA.baseUrl,
        secretRefId: secret.body.id,
        policyVersion: POLICY_VERSION,
        models: ["m1", "m2"],
        pricing: { m1: { inputUsdPerMTok: 2, outputUsdPerMTok: 8 }, m2: { inputUsdPerMTok: 1, outputUsdPerMTok: 1 } },
        timeoutMs: 15_000,
      },
    ],
    categoryModels: options.categoryModels ?? {},
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  for (const model of options.consent ?? ["m1", "m2"]) {
    const consent = await call("POST", "/v1/providers/consents", { provider: id, model, policyVersion: POLICY_VERSION });
    expect(consent.status, JSON.stringify(consent.body)).toBe(201);
  }
  return { client, apiKey, secretId: secret.body.id, call, providerKey };
}

async function createAgent(t: Tenant, body: Record<string, unknown> = {}) {
  return t.client.createAgent({ kind: "coach", displayName: "Remote", model: "openai-compatible:local/m1", ...body } as never);
}

async function runOf(t: Tenant, agentId: string, text: string): Promise<Run> {
  const { runKey } = await t.client.sendMessage(agentId, { text });
  return t.client.waitForRun(agentId, runKey, { timeoutMs: 90_000 });
}

type Trace = { attempts: Array<Record<string, any>>; policy: Array<Record<string, any>>; usage: { inputTokens: number; outputTokens: number; costMicros: number; calls: number } };
const traceOf = (run: Run) => run.trace as unknown as Trace;

describe("model gateway, end to end", () => {
  it("streams a remote model's reply token by token, with the decrypted key, usage and cost on the run", async () => {
    const t = await tenant();
    const agent = await createAgent(t, { instructions: "Be brief." });
    providerA.enqueue(reply.text(["Hel", "lo", " from", " m1"], { prompt_tokens: 1200, completion_tokens: 4 }, { chunkDelayMs: 30 }));

    const stream = t.client.streamMessage(agent.id, { text: "hi there" });
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    const runKey = await stream.runKey;
    expect(events.filter((e) => e.type === "text.delta").map((e) => e.data.delta)).toEqual(["Hel", "lo", " from", " m1"]);
    expect(events.at(-1)?.type).toBe("run.completed");

    expect(providerA.requestCount).toBe(1);
    const sent = providerA.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${t.providerKey}`);
    expect(sent.json).toMatchObject({ model: "m1", stream: true, stream_options: { include_usage: true } });
    expect(sent.json!.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi there" },
    ]);

    const run = await t.client.getRun(agent.id, runKey);
    expect(run.status).toBe("completed");
    // 1200 × 2 + 4 × 8 micro-USD
    expect(traceOf(run).usage).toEqual({ inputTokens: 1200, outputTokens: 4, costMicros: 2432, calls: 1 });
    expect(traceOf(run).attempts).toEqual([expect.objectContaining({ provider: "local", model: "m1", attempt: 1, outcome: "succeeded", status: 200 })]);
    expect(traceOf(run).policy).toContainEqual(expect.objectContaining({ gate: "inference", outcome: "allowed", subject: "openai-compatible:local/m1" }));
    const messages = (await t.client.listMessages(agent.id)).data;
    expect(messages[0]).toMatchObject({ kind: "assistant", text: "Hello from m1" });
  });

  it("executes the model's tool call and sends the result back in the next request", async () => {
    const t = await tenant();
    const gym = (await t.call("POST", "/v1/journal/categories", { name: "Gym" })).body;
    const agent = await createAgent(t, { allowedCategoryIds: [gym.id], controlMode: "ecosystem" });
    providerA.enqueue(reply.toolCall("create_task", { title: "Squats 5x5", categoryId: gym.id }), reply.text(["Created", " it"]));

    const run = await runOf(t, agent.id, "add squats to my gym list");
    expect(run.status).toBe("completed");
    const tasks = (await t.call("GET", `/v1/journal/tasks?categoryId=${gym.id}`)).body.data;
    expect(tasks.map((task: any) => task.title)).toEqual(["Squats 5x5"]);

    expect(providerA.requestCount).toBe(2);
    const [first, second] = providerA.requests;
    expect((first!.json!.tools as any[]).map((tool) => tool.function.name)).toContain("create_task");
    const messages = second!.json!.messages as any[];
    const assistant = messages.find((m) => m.role === "assistant");
    expect(assistant.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "create_task", arguments: expect.any(String) } }]);
    // The persisted plan's arguments (schema defaults filled in), as the model will see them on every replay.
    expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toMatchObject({ title: "Squats 5x5", categoryId: gym.id });
    const toolMessage = messages.find((m) => m.role === "tool");
    expect(toolMessage.tool_call_id).toBe("call_1");
    expect(JSON.parse(toolMessage.content)).toMatchObject({ ok: true });
    expect(toolMessage.content).toContain(tasks[0].id);
    expect(traceOf(run).usage.calls).toBe(2);
    const kinds = (await t.client.listMessages(agent.id)).data.map((m) => m.kind).reverse();
    expect(kinds).toEqual(["user", "action", "toolResult", "assistant"]);
  });

  it("retries 429, 429 and succeeds on the third attempt, keeping the timeline", async () => {
    const t = await tenant();
    const agent = await createAgent(t);
    providerA.enqueue(reply.error(429), reply.error(429), reply.text(["third", " time"]));
    const run = await runOf(t, agent.id, "retry please");
    expect(run.status).toBe("completed");
    expect(providerA.requestCount).toBe(3);
    const attempts = traceOf(run).attempts;
    expect(attempts.map((a) => [a.attempt, a.outcome, a.status])).toEqual([
      [1, "retrying", 429],
      [2, "retrying", 429],
      [3, "succeeded", 200],
    ]);
    expect(attempts[0]!.backoffMs).toBeGreaterThan(0);
    expect(attempts[1]!.backoffMs).toBeGreaterThan(attempts[0]!.backoffMs - 1);
    for (const attempt of attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("after three 429s moves to the configured fallback model", async () => {
    const t = await tenant();
    const agent = await createAgent(t, { fallbackModels: ["openai-compatible:local/m2"] });
    providerA.enqueue(reply.error(429), reply.error(429), reply.error(429), reply.text(["fallback", " answer"], { prompt_tokens: 100, completion_tokens: 2 }));
    const run = await runOf(t, agent.id, "are you there");
    expect(run.status).toBe("completed");
    expect(providerA.requests.map((r) => r.json?.model)).toEqual(["m1", "m1", "m1", "m2"]);
    expect(traceOf(run).attempts.map((a) => [a.model, a.outcome])).toEqual([
      ["m1", "retrying"],
      ["m1", "retrying"],
      ["m1", "retries_exhausted"],
      ["m2", "succeeded"],
    ]);
    expect(traceOf(run).usage).toMatchObject({ costMicros: 102, calls: 1 });
    expect((await t.client.listMessages(agent.id)).data[0]).toMatchObject({ kind: "assistant", text: "fallback answer" });
  });

  it("fails fast on 401: no retry, the run ends provider_error", async () => {
    const t = await tenant();
    const agent = await createAgent(t);
    providerA.enqueue(reply.error(401), reply.text(["never"]));
    const run = await runOf(t, agent.id, "hello");
    expect(run).toMatchObject({ status: "failed_terminal", errorCode: "provider_error" });
    expect(providerA.requestCount).toBe(1);
    expect(traceOf(run).attempts).toEqual([expect.objectContaining({ outcome: "fail_fast_aborted", status: 401 })]);
    const system = (await t.client.listMessages(agent.id)).data.find((m) => m.kind === "system");
    expect(system?.text).toContain("401");
  });

  describe("every gate failure sends nothing and ends the run with its code", () => {
    async function expectDenied(t: Tenant, agentId: string, text: string, code: string) {
      const run = await runOf(t, agentId, text);
      expect(run).toMatchObject({ status: "failed_terminal", errorCode: code });
      expect(providerA.requestCount).toBe(0);
      expect(providerB.requestCount).toBe(0);
      expect(traceOf(run).policy).toContainEqual(expect.objectContaining({ outcome: "denied", code }));
      const messages = (await t.client.listMessages(agentId)).data;
      const system = messages.find((m) => m.kind === "system");
      expect(system?.metadata).toMatchObject({ code });
      expect(system?.text).toBeTruthy();
      return { run, system: system! };
    }

    it("out_of_scope: the context carries a category outside the agent's", async () => {
      const t = await tenant();
      const agent = await createAgent(t, { allowedCategoryIds: ["cat_gym"] });
      providerA.enqueue(reply.text(["never"]));
      const pasted = `please look at this record\n${JSON.stringify({ id: "task_1", title: "Salary review", categoryId: "cat_finance" })}`;
      const { system } = await expectDenied(t, agent.id, pasted, "out_of_scope");
      expect(system.text).toContain("cat_finance");
    });

    it("provider_not_allowed: no such endpoint in the policy", async () => {
      const t = await tenant();
      const agent = await createAgent(t, { model: "openai-compatible:elsewhere/m1" });
      await expectDenied(t, agent.id, "hello", "provider_not_allowed");
    });

    it("model_not_allowed: the model is not on the endpoint, or not for the agent's category", async () => {
      const t = await tenant({ categoryModels: { cat_gym: ["openai-compatible:local/m2"] } });
      const offList = await createAgent(t, { model: "openai-compatible:local/m9" });
      await expectDenied(t, offList.id, "hello", "model_not_allowed");
      const gymAgent = await createAgent(t, { allowedCategoryIds: ["cat_gym"] });
      await expectDenied(t, gymAgent.id, "hello", "model_not_allowed");
    });

    it("privacy_confirmation_required: no receipt for this model under the current policy version", async () => {
      const t = await tenant({ consent: ["m2"] });
      const agent = await createAgent(t);
      await expectDenied(t, agent.id, "hello", "privacy_confirmation_required");
    });

    it("secret_unavailable: the referenced key was revoked", async () => {
      const t = await tenant();
      expect((await t.call("DELETE", `/v1/providers/secrets/${t.secretId}`)).status).toBe(200);
      const agent = await createAgent(t);
      const { system } = await expectDenied(t, agent.id, "hello", "secret_unavailable");
      expect(system.text).not.toContain(t.providerKey);
    });

    it("overshared_payload_blocked: the final guard on the bytes refuses a field outside the allowlist", async () => {
      const t = await tenant({ id: "leaky" });
      const agent = await createAgent(t, { model: "openai-compatible:leaky/m1" });
      providerA.enqueue(reply.text(["never"]));
      const { run } = await expectDenied(t, agent.id, "hello", "overshared_payload_blocked");
      expect(traceOf(run).policy).toContainEqual(expect.objectContaining({ gate: "need_to_know", detail: expect.objectContaining({ fields: ["vigil_debug_context.note"] }) }));
    });
  });

  it("an endpoint on host A cannot be used to reach host B (network_denied)", async () => {
    const t = await tenant();
    const agent = await createAgent(t);
    providerA.enqueue(reply.redirect(`${providerB.baseUrl}/chat/completions`));
    providerB.enqueue(reply.text(["should never be asked"]));
    const run = await runOf(t, agent.id, "hello");
    expect(run).toMatchObject({ status: "failed_terminal", errorCode: "network_denied" });
    expect(providerA.requestCount).toBe(1);
    expect(providerB.requestCount).toBe(0);
    expect(traceOf(run).policy).toContainEqual(expect.objectContaining({ gate: "egress", outcome: "denied", code: "network_denied" }));
  });
});
