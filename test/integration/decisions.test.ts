import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import * as schema from "../../src/db/tenant-schema";
import type { TenantDb } from "../../src/objects/tenant/types";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const ASK = '/tool ask_user {"question":"Which day?","options":[{"id":"mon","label":"Monday"},{"id":"tue","label":"Tuesday"}]}';
const ASK_STRICT = '/tool ask_user {"question":"Which time?","options":[{"id":"am","label":"Morning"}],"allowFreeText":false}';

async function setup() {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, {
    model: "builtin:playbook",
    playbook: { rules: [{ when: { reason: "toolResult" }, reply: "noted {{observation.chosenOptionId}}" }, { when: {}, reply: "asked" }] },
  });
  return { tenantId, key, agent };
}

/** The agent asks; returns its pending decision. */
async function ask(key: string, agentId: string, text = ASK, sessionId?: string): Promise<any> {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text, ...(sessionId ? { sessionId } : {}) } });
  expect(sent.status).toBe(202);
  const run = await waitForRun(key, agentId, sent.body.runKey);
  expect(run.status).toBe("completed");
  const listed = await api("GET", "/v1/decisions?status=pending", { key });
  expect(listed.status).toBe(200);
  return listed.body.data.find((d: any) => d.agentId === agentId && d.payload.question === JSON.parse(text.slice("/tool ask_user ".length)).question);
}

describe("decisions: ask_user answered over the API", () => {
  it("a resolution whose wake was lost is delivered when the resolve is retried", async () => {
    const { tenantId, key, agent } = await setup();
    const decision = await ask(key, agent.id);
    // Simulate a crash between the resolution's commit and its wake: resolve the row directly, with no wake.
    const stub = env.TENANT.get(env.TENANT.idFromName(tenantId)) as unknown as DurableObjectStub;
    await runInDurableObject(stub, async (instance) => {
      (instance as unknown as { parts: { db: TenantDb } }).parts.db
        .update(schema.decisions)
        .set({ status: "resolved", resolvedAt: new Date().toISOString(), resolution: { resolutionType: "choose_option", chosenOptionId: "mon", resolvedBy: "human", actor: "key:test" } })
        .where(eq(schema.decisions.id, decision.id))
        .run();
    });
    const retried = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(retried.status).toBe(409);
    const run = await eventually(async () => ((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data as any[]).find((r) => r.reason === "toolResult" && r.status === "completed"));
    expect(run).toBeTruthy();
    const observation = ((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data as any[]).find((m) => m.kind === "observation" && m.content?.decisionId === decision.id);
    expect(observation.text).toBe("answer to Which day?: Monday");
  });

  it("lists the pending question, resolves it once, and wakes the agent with the answer", async () => {
    const { key, agent } = await setup();
    const decision = await ask(key, agent.id);
    expect(decision).toMatchObject({ type: "decision/option", status: "pending", payload: { kind: "ask_user", question: "Which day?", allowFreeText: true } });
    expect(decision.payload.threadId).toBe(`${agent.id}:session:default`);

    const resolved = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "tue" } });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: decision.id, status: "resolved", resolution: { resolutionType: "choose_option", chosenOptionId: "tue", resolvedBy: "human" } });
    expect(resolved.body.resolvedAt).toBeTruthy();

    const run = await eventually(async () => {
      const runs = (await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data as any[];
      const woke = runs.find((r) => r.reason === "toolResult");
      return woke && !["queued", "running", "waiting", "ready"].includes(woke.status) ? woke : undefined;
    });
    expect(run.status).toBe("completed");
    const history = (await api("GET", `/v1/agents/${agent.id}/messages?sessionId=default`, { key })).body.data as any[];
    const observation = history.find((m) => m.kind === "observation" && m.content?.decisionId === decision.id);
    expect(observation.text).toBe("answer to Which day?: Tuesday");
    expect(observation.content).toMatchObject({ decisionId: decision.id, chosenOptionId: "tue", answerText: null });
    expect(history[0]).toMatchObject({ kind: "assistant", text: "noted tue" });

    const again = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("decision_not_pending");
    // The retry re-sends the same wake; its runKey dedupes, so the agent still ran once.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(((await api("GET", `/v1/agents/${agent.id}/runs`, { key })).body.data as any[]).filter((r) => r.reason === "toolResult")).toHaveLength(1);
    expect((await api("GET", "/v1/decisions?status=pending", { key })).body.data).toEqual([]);
    expect((await api("GET", "/v1/decisions?status=resolved", { key })).body.data.map((d: any) => d.id)).toEqual([decision.id]);
    const audit = (await api("GET", "/v1/audit", { key })).body.data as any[];
    expect(audit.filter((a) => a.action === "decision.resolved")).toHaveLength(1);
  });

  it("rejects invalid answers with 400 naming the field, and accepts free text where allowed", async () => {
    const { key, agent } = await setup();
    const decision = await ask(key, agent.id);
    const bad = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "sun" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ path: "chosenOptionId" })]);
    const approve = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "approve" } });
    expect(approve.status).toBe(400);
    expect(approve.body.errors[0].path).toBe("resolutionType");

    const strict = await ask(key, agent.id, ASK_STRICT);
    const text = await api("POST", `/v1/decisions/${strict.id}/resolve`, { key, body: { resolutionType: "choose_option", answerText: "after lunch" } });
    expect(text.status).toBe(400);
    expect(text.body.errors[0].path).toBe("answerText");

    const free = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "choose_option", answerText: "Saturday" } });
    expect(free.status).toBe(200);
    expect(free.body.resolution).toMatchObject({ answerText: "Saturday" });
    expect(free.body.resolution.chosenOptionId).toBeUndefined();
    const observation = await eventually(async () =>
      ((await api("GET", `/v1/agents/${agent.id}/messages?sessionId=default`, { key })).body.data as any[]).find((m) => m.kind === "observation" && m.content?.decisionId === decision.id),
    );
    expect(observation.text).toBe("answer to Which day?: Saturday");
  });

  it("hides decisions from other tenants and from widget tokens of other agents", async () => {
    const { key, agent } = await setup();
    // Asked in user-1's widget session: widget tokens see only their own conversations' decisions.
    const decision = await ask(key, agent.id, ASK, widgetSessionId("user-1"));
    const other = await createTenant("other");
    expect((await api("GET", "/v1/decisions", { key: other.key })).body.data).toEqual([]);
    expect((await api("POST", `/v1/decisions/${decision.id}/resolve`, { key: other.key, body: { resolutionType: "reject" } })).status).toBe(404);

    const sibling = await createAgent(key);
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "user-2", agents: [sibling.id], ttlSeconds: 600 } });
    const token = minted.body.token as string;
    expect((await api("GET", "/v1/decisions", { key: token })).body.data).toEqual([]);
    expect((await api("POST", `/v1/decisions/${decision.id}/resolve`, { key: token, body: { resolutionType: "reject" } })).status).toBe(404);

    const mine = await api("POST", "/v1/tokens", { key, body: { sub: "user-1", agents: [agent.id], ttlSeconds: 600 } });
    expect((await api("GET", "/v1/decisions", { key: mine.body.token })).body.data.map((d: any) => d.id)).toEqual([decision.id]);
    const rejected = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key: mine.body.token, body: { resolutionType: "reject", rationale: "not now" } });
    expect(rejected.status).toBe(200);
    expect(rejected.body.resolution).toMatchObject({ resolutionType: "reject", actor: "jwt:user-1" });
  });

  it("404s an unknown decision", async () => {
    const { key } = await setup();
    expect((await api("POST", "/v1/decisions/dec_nope/resolve", { key, body: { resolutionType: "reject" } })).status).toBe(404);
  });
});
