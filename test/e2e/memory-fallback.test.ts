/**
 * Compaction against a remote model, end to end: a real `wrangler dev`, a scripted OpenAI-compatible
 * provider on 127.0.0.1 behind the tenant's policy, secret and receipts. When the summary call is
 * rate limited (429 on every attempt) the deterministic extractive summary is committed instead,
 * and the conversation itself never waits for compaction.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VigilClient } from "../../src/client";
import { dayKey } from "../../src/core/governance/budget";
import { reply, ScriptedOpenAI } from "../support/scripted-openai";
import type { VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;
let provider: ScriptedOpenAI;

beforeAll(async () => {
  provider = await ScriptedOpenAI.start();
  server = sharedServer();
});
afterAll(async () => {
  await provider?.close();
});

const POLICY_VERSION = "2026-11";

async function remoteTenant(): Promise<{ client: VigilClient; call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> }> {
  const { client } = await server.tenant(`mem-${randomBytes(4).toString("hex")}`);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await client.send(method, path, body);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const secret = await call("POST", "/v1/providers/secrets", { provider: "local", apiKey: `sk-e2e-${randomBytes(8).toString("hex")}` });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  const policy = await call("PUT", "/v1/policy", {
    providers: [{ id: "local", kind: "openai-compatible", baseUrl: provider.baseUrl, secretRefId: secret.body.id, policyVersion: POLICY_VERSION, models: ["m1"], timeoutMs: 15_000 }],
    categoryModels: {},
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const consent = await call("POST", "/v1/providers/consents", { provider: "local", model: "m1", policyVersion: POLICY_VERSION });
  expect(consent.status, JSON.stringify(consent.body)).toBe(201);
  return { client, call };
}

describe("compaction with a remote model", () => {
  it("a rate-limited summary call falls back to the extractive summary; replies were never held up", { timeout: 240_000 }, async () => {
    const { client, call } = await remoteTenant();
    const agent = await client.createAgent({ kind: "coach", displayName: "Remote memory", model: "openai-compatible:local/m1" } as never);

    // 21 turns: 42 messages overflow the 40-message hot tier only after the last one.
    const turns = 21;
    for (let i = 0; i < turns; i++) {
      provider.enqueue(reply.text([`noted ${i}`]));
      // Compaction starts right after the last run: its summary call gets three 429s (the gateway's two
      // retries included), and no fallback model is configured.
      if (i === turns - 1) provider.enqueue(reply.error(429), reply.error(429), reply.error(429));
      const { runKey } = await client.sendMessage(agent.id, { text: `turn ${i}: the long run on day ${i} was ${5 + i} km` });
      const run = await client.waitForRun(agent.id, runKey, { timeoutMs: 60_000 });
      expect(run.status).toBe("completed");
    }

    const deadline = Date.now() + 90_000;
    let memory: any;
    for (;;) {
      memory = (await call("GET", `/v1/agents/${agent.id}/memory`)).body;
      if (memory.counts.summaries > 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(memory.counts.summaries).toBe(1);
    expect(memory.compaction).toMatchObject({ done: 1, failedTerminal: 0, latestSummaryMessageId: expect.any(String) });

    // What the provider received for the summary: the fixed prompt contract, the span as data.
    const summaryRequests = provider.requests.slice(turns);
    expect(summaryRequests.length).toBe(3);
    const sent = summaryRequests[0]!.json as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[0]).toMatchObject({ role: "system" });
    expect(sent.messages[0]!.content).toContain("You are the memory compactor");
    expect(sent.messages.at(-1)!.content).toContain("<span>");
    expect(sent.messages.at(-1)!.content).toContain("turn 0: the long run on day 0 was 5 km");

    const summary = (await call("GET", `/v1/agents/${agent.id}/messages?limit=5`)).body.data.find((m: any) => m.kind === "summary");
    expect(summary.id).toBe(memory.compaction.latestSummaryMessageId);
    expect(summary.metadata).toMatchObject({ summarizer: "extractive", summarizerContractVersion: "summary.extractive.v1", summarizerReason: "rate_limited", summaryDepth: 0 });
    expect(summary.text).toMatch(/^Extractive summary of \d+ item\(s\):/);
    expect(summary.text).toContain("turn 0");

    // The next turn's prompt carries the summary (as memory data) instead of the summarized raw turns.
    provider.enqueue(reply.text(["ok"]));
    const { runKey } = await client.sendMessage(agent.id, { text: "what did I run first?" });
    expect((await client.waitForRun(agent.id, runKey, { timeoutMs: 60_000 })).status).toBe("completed");
    const next = provider.requests.at(-1)!.json as { messages: Array<{ role: string; content: string }> };
    const texts = next.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    expect(texts.some((text) => text.startsWith("[agent memory") && text.includes("Extractive summary"))).toBe(true);
    expect(texts).not.toContain("turn 0: the long run on day 0 was 5 km");
    expect(texts).toContain("what did I run first?");
  });

  it("a summary the model writes is committed as the llm summary, and its tokens count toward the agent's day", { timeout: 240_000 }, async () => {
    const { client, call } = await remoteTenant();
    const agent = await client.createAgent({ kind: "coach", displayName: "Metered memory", model: "openai-compatible:local/m1" } as never);
    const turns = 21;
    const before = provider.requests.length;
    // Usage counts per tenant-local day (UTC): the turns may straddle midnight, so every day they touched is summed.
    const firstDay = dayKey(Date.now(), "UTC");
    for (let i = 0; i < turns; i++) {
      provider.enqueue(reply.text([`noted ${i}`], { prompt_tokens: 10, completion_tokens: 1 }));
      if (i === turns - 1) provider.enqueue(reply.text(["Runs ", "logged ", "for ", "days ", "0-20."], { prompt_tokens: 700, completion_tokens: 50 }));
      const { runKey } = await client.sendMessage(agent.id, { text: `turn ${i}: ran ${5 + i} km` });
      expect((await client.waitForRun(agent.id, runKey, { timeoutMs: 60_000 })).status).toBe("completed");
    }
    const deadline = Date.now() + 90_000;
    let memory: any;
    for (;;) {
      memory = (await call("GET", `/v1/agents/${agent.id}/memory`)).body;
      if (memory.counts.summaries > 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(memory.counts.summaries).toBe(1);
    expect(provider.requests.length - before).toBe(turns + 1);
    const summary = (await call("GET", `/v1/agents/${agent.id}/messages?limit=5`)).body.data.find((m: any) => m.kind === "summary");
    expect(summary.metadata).toMatchObject({ summarizer: "llm", summaryDepth: 0 });
    expect(summary.text).toBe("Runs logged for days 0-20.");
    // 21 run steps of 11 tokens each, plus the summary call's 750.
    const days = [...new Set([firstDay, dayKey(Date.now(), "UTC")])];
    let tokens = 0;
    for (const day of days) tokens += (await call("GET", `/v1/agents/${agent.id}/usage?day=${day}`)).body.usage.tokens as number;
    expect(tokens).toBe(turns * 11 + 750);
  });
});
