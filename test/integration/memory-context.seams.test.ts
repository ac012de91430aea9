import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONTEXT_BUDGET } from "../../src/core/memory/context-assembly";
import { threadIds } from "../../src/core/ids/run-keys";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const T0 = Date.now() + 10 * 86_400_000;
const HISTORY = 10_000;

describe("context assembly over a long history", () => {
  it(`at ${HISTORY.toLocaleString("en-US")} messages a run's context stays within the count and token bounds, with slots, warm and cold summaries`, { timeout: 120_000 }, async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
    const thread = threadIds.interactive(agent.id, "default");
    expect((await api("PUT", `/v1/agents/${agent.id}/memory/slots/primaryGoal`, { key, body: { value: "Run the Valencia marathon under 4 hours" } })).status).toBe(200);

    let totalTokens = 0;
    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const storage = (instance as any).ctx.storage as DurableObjectStorage;
      storage.transactionSync(() => {
        for (let i = 0; i < HISTORY; i++) {
          const text = `message ${i}: on day ${i % 365} the athlete ran ${(i % 21) + 1} km and logged how the knee felt afterwards`;
          totalTokens += Math.ceil(text.length / 4);
          storage.sql.exec(
            "INSERT INTO messages (id, thread_id, kind, text, metadata, created_at) VALUES (?, ?, ?, ?, '{}', ?)",
            `seed-${i}`,
            thread,
            i % 2 ? "assistant" : "user",
            text,
            new Date().toISOString(),
          );
        }
      });
    });

    const compacted = await (agentDo(tenantId, agent.id) as any).compactNow(thread, T0);
    expect(compacted).toMatchObject({ ok: true, failed: 0 });
    expect(compacted.committed).toBeGreaterThan(HISTORY / 50);

    await runInDurableObject(agentDo(tenantId, agent.id), async (instance: AgentDO) => {
      const { assembled, hot } = instance.parts.memoryContext.assemble(thread);
      const count = (kind: string, tier?: string) => assembled.items.filter((item: any) => item.kind === kind && (tier === undefined || item.tier === tier)).length;
      expect(assembled.tokens).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET.maxTokens);
      expect(assembled.tokens).toBe(assembled.items.reduce((sum: number, item: any) => sum + item.tokens, 0));
      expect(count("message")).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET.maxHotMessages);
      expect(count("message")).toBeGreaterThan(0);
      expect(count("summary", "warm")).toBeGreaterThan(0);
      expect(count("summary", "warm")).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET.maxWarmSummaries);
      expect(count("summary", "cold")).toBeGreaterThan(0);
      expect(count("summary", "cold")).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET.maxColdSummaries);
      expect(count("slots")).toBe(1);
      expect(assembled.items.length).toBeLessThanOrEqual(2 + DEFAULT_CONTEXT_BUDGET.maxColdSummaries + DEFAULT_CONTEXT_BUDGET.maxWarmSummaries + DEFAULT_CONTEXT_BUDGET.maxHotMessages);
      // The hot tier is the newest raw suffix: it ends with the last seeded message.
      expect(hot.at(-1)?.id).toBe(`seed-${HISTORY - 1}`);
      // Raw history is all still there.
      const raw = (instance as any).ctx.storage.sql.exec("SELECT count(*) AS n FROM messages WHERE thread_id = ? AND kind != 'summary'", thread).toArray()[0].n;
      expect(raw).toBe(HISTORY);
    });

    // A real run over this history: its prompt (as the builtin model measures it) is a bounded slice of it.
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "how is my knee?" } });
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    const inputTokens = run.trace.usage.inputTokens;
    expect(inputTokens).toBeGreaterThan(0);
    expect(inputTokens).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET.maxTokens * 1.5);
    expect(inputTokens).toBeLessThan(totalTokens / 10);
    const reply = (await api("GET", `/v1/agents/${agent.id}/messages?limit=1`, { key })).body.data[0];
    expect(reply).toMatchObject({ kind: "assistant", text: "echo: how is my knee?" });
  });
});
