import { env, runInDurableObject } from "cloudflare:test";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import { describe, expect, it } from "vitest";
import { toModelMessages, toolSetFor } from "../../src/objects/agent/runs/model-steps";
import { allowedTools, resolveAgentProfile } from "../../src/tools/capabilities";
import { builtinTools } from "../../src/tools/registry";
import { api, createTaskCommand, playbookAgentInCategory, taskTitlesIn, waitForRun } from "./helpers";
import type { TenantDO } from "../../src/objects/tenant/tenant-do";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));

const setup = (controlMode: string | null = "orchestrator") => playbookAgentInCategory(controlMode);

const audit = async (key: string) => (await api("GET", "/v1/audit?limit=200", { key })).body.data as Array<{ action: string; target: string | null; detail: any }>;

async function send(key: string, agentId: string, text: string, sessionId?: string): Promise<string> {
  const sent = await api("POST", `/v1/agents/${agentId}/messages`, { key, body: { text, ...(sessionId ? { sessionId } : {}) } });
  expect(sent.status).toBe(202);
  return sent.body.runKey;
}

/** Polls gently: the per-key rate limit (100/min) would refuse `eventually`'s 25 ms cadence. */
async function poll<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The run parks on the decision: returns the pending tool_approval, after checking the run is `waiting`. */
async function pendingApproval(key: string, agentId: string, runKey: string): Promise<any> {
  const decision = await poll(async () => {
    const listed = await api("GET", `/v1/decisions?status=pending&type=decision/tool_approval&agentId=${agentId}`, { key });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    return listed.body.data.find((d: any) => d.runKey === runKey);
  });
  const run = await poll(async () => {
    const res = await api("GET", `/v1/agents/${agentId}/runs/${runKey}`, { key });
    return res.body.status === "waiting" ? res.body : undefined;
  });
  expect(run.status).toBe("waiting");
  return decision;
}

const resolve = (key: string, id: string, body: Record<string, unknown>) => api("POST", `/v1/decisions/${id}/resolve`, { key, body });
const toolResults = async (key: string, agentId: string) => ((await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data as any[]).filter((m) => m.kind === "toolResult");

describe("tool approvals: a mutating call waits for a person", () => {
  it("plans the action, opens a decision, parks the run, and executes once approved", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Run 5k"));
    const decision = await pendingApproval(key, agent.id, runKey);
    expect(decision).toMatchObject({
      type: "decision/tool_approval",
      status: "pending",
      payload: { kind: "tool_approval", toolName: "create_task", riskLevel: "low", argsPreview: { title: "Run 5k", categoryId }, recommendation: "approve", controlMode: "orchestrator", escalation: { reason: "always_escalate" } },
    });
    expect(decision.operationId).toBeTruthy();
    // Planned and persisted, not executed.
    const actions = await runInDurableObject(agentDo(tenantId, agent.id), (_i, state) => state.storage.sql.exec("SELECT status, operation_id FROM actions").toArray());
    expect(actions).toEqual([{ status: "awaiting_approval", operation_id: decision.operationId }]);
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);

    const approved = await resolve(key, decision.id, { resolutionType: "approve", rationale: "fine" });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "resolved", resolution: { resolutionType: "approve", resolvedBy: "human", trustOutcome: "human_approves_tool_call" } });
    const run = await waitForRun(key, agent.id, runKey);
    expect(run.status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Run 5k"]);
    expect(run.trace.policy.map((p: any) => p.outcome)).toEqual(["approval_required", "approved"]);

    const events = (await agentDo(tenantId, agent.id).listEvents(0, 500)) as Array<{ type: string; data: any }>;
    expect(events.find((e) => e.type === "decision.requested")?.data).toMatchObject({ decisionId: decision.id, kind: "tool_approval", toolName: "create_task" });
    expect(events.find((e) => e.type === "decision.resolved")?.data).toMatchObject({ decisionId: decision.id, resolutionType: "approve", resolvedBy: "human" });
    const trail = await audit(key);
    expect(trail.filter((a) => a.target === decision.id).map((a) => a.action).reverse()).toEqual(["decision.requested", "decision.resolved"]);
    expect(trail.find((a) => a.action === "trust.updated")?.detail).toMatchObject({ outcome: "human_approves_tool_call", previousScore: 50, nextScore: 51 });

    const again = await resolve(key, decision.id, { resolutionType: "reject" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("decision_not_pending");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Run 5k"]);
  });

  it("a rejection reaches the model as a toolResult {ok:false, code:'rejected'} and writes nothing", async () => {
    const { key, agent, categoryId } = await setup();
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Sneaky"));
    const decision = await pendingApproval(key, agent.id, runKey);
    expect((await resolve(key, decision.id, { resolutionType: "reject", rationale: "not today" })).status).toBe(200);
    const run = await waitForRun(key, agent.id, runKey);
    expect(run.status).toBe("completed");
    const [result] = await toolResults(key, agent.id);
    expect(result.content).toMatchObject({ ok: false, code: "rejected", details: { decisionId: decision.id } });
    expect(result.content.message).toContain("not today");
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
    expect((await audit(key)).find((a) => a.action === "trust.updated")?.detail).toMatchObject({ outcome: "human_rejects_tool_call", nextScore: 48 });
  });

  it("modify: invalid args answer 400 and leave the decision pending; valid args execute and the plan records them", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Draft"));
    const decision = await pendingApproval(key, agent.id, runKey);
    const bad = await resolve(key, decision.id, { resolutionType: "modify", modifiedArgs: { title: "", categoryId } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect(bad.body.errors[0].path).toBe("modifiedArgs");
    expect((await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key })).body.data.map((d: any) => d.id)).toEqual([decision.id]);

    const ok = await resolve(key, decision.id, { resolutionType: "modify", modifiedArgs: { title: "Final", categoryId } });
    expect(ok.status).toBe(200);
    const run = await waitForRun(key, agent.id, runKey);
    expect(run.status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Final"]);
    const recorded = await runInDurableObject(agentDo(tenantId, agent.id), (_i, state) => state.storage.sql.exec("SELECT resolution_type, modified_args FROM action_approvals").toArray());
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.resolution_type).toBe("modify");
    expect(JSON.parse(String(recorded[0]!.modified_args))).toMatchObject({ title: "Final", categoryId });
    expect(run.trace.policy.map((p: any) => p.outcome)).toEqual(["approval_required", "modified"]);
  });

  it("a widget token approves one call but cannot grant alwaysApprove (403, decision stays pending)", async () => {
    const { key, agent, categoryId } = await setup();
    // In the visitor's own widget session: a widget token answers only its own conversation's decisions.
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Widget"), widgetSessionId("visitor"));
    const decision = await pendingApproval(key, agent.id, runKey);
    // A visitor answers an approval only for a tool the policy lists as visitor-approvable (docs/api.md "Authority").
    expect((await api("PUT", "/v1/policy", { key, body: { visitorApprovableTools: ["create_task"] } })).status).toBe(200);
    const minted = await api("POST", "/v1/tokens", { key, body: { sub: "visitor", agents: [agent.id], ttlSeconds: 600 } });
    const standing = await resolve(minted.body.token, decision.id, { resolutionType: "approve", alwaysApprove: true });
    expect(standing.status).toBe(403);
    expect(standing.body.code).toBe("forbidden");
    expect((await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key })).body.data.map((d: any) => d.id)).toContain(decision.id);
    expect((await resolve(minted.body.token, decision.id, { resolutionType: "approve" })).status).toBe(200);
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Widget"]);
  });

  it("alwaysApprove: later calls of that tool in the thread skip approval (recorded); another thread still asks", async () => {
    const { key, agent, categoryId } = await setup();
    const first = await send(key, agent.id, createTaskCommand(categoryId, "One"));
    const decision = await pendingApproval(key, agent.id, first);
    expect((await resolve(key, decision.id, { resolutionType: "approve", alwaysApprove: true })).status).toBe(200);
    await waitForRun(key, agent.id, first);

    const second = await send(key, agent.id, createTaskCommand(categoryId, "Two"));
    const run = await waitForRun(key, agent.id, second);
    expect(run.status).toBe("completed");
    expect((await taskTitlesIn(key, categoryId)).sort()).toEqual(["One", "Two"]);
    expect(run.trace.policy).toEqual([expect.objectContaining({ gate: "approval", outcome: "approved", detail: { reason: "session_always_approved" } })]);
    const trail = await audit(key);
    expect(trail.find((a) => a.action === "approval.granted")?.detail).toMatchObject({ agentId: agent.id, toolName: "create_task" });
    expect(trail.filter((a) => a.action === "approval.skipped")).toHaveLength(1);
    expect(trail.find((a) => a.action === "trust.updated")?.detail).toMatchObject({ outcome: "human_approves_always", nextScore: 53 });

    const elsewhere = await send(key, agent.id, createTaskCommand(categoryId, "Three"), "other-thread");
    await pendingApproval(key, agent.id, elsewhere);
  });
});

describe("control modes decide which calls wait", () => {
  it("adaptive (the default): a new agent's low-risk write proceeds, its medium-risk write waits", async () => {
    const { key, agent, categoryId } = await setup(null);
    expect(agent.controlMode ?? agent.config?.controlMode ?? "adaptive").toBe("adaptive");
    const created = await send(key, agent.id, createTaskCommand(categoryId, "Plain"));
    expect((await waitForRun(key, agent.id, created)).status).toBe("completed");
    const task = (await api("GET", `/v1/journal/tasks?categoryId=${categoryId}`, { key })).body.data[0];
    const updated = await send(key, agent.id, `/tool update_task_fields {"taskId":"${task.id}","fields":{"title":"Renamed"}}`);
    const decision = await pendingApproval(key, agent.id, updated);
    expect(decision.payload).toMatchObject({ toolName: "update_task_fields", riskLevel: "medium", blastRadius: "medium", severity: "medium", escalation: { reason: "rule_matched" } });
    expect(JSON.stringify(decision)).not.toMatch(/trustScore|"score"/);
  });

  it("adaptive under the policy's permissive trust profile (initial 70): the medium-risk write proceeds", async () => {
    const { key, agent, categoryId } = await setup(null);
    const policy = await api("PUT", "/v1/policy", { key, body: { trust: { profile: "permissive" } } });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    expect(policy.body.trust).toEqual({ profile: "permissive", overrides: {} });
    const created = await send(key, agent.id, createTaskCommand(categoryId, "Plain"));
    expect((await waitForRun(key, agent.id, created)).status).toBe("completed");
    const task = (await api("GET", `/v1/journal/tasks?categoryId=${categoryId}`, { key })).body.data[0];
    const updated = await send(key, agent.id, `/tool update_task_fields {"taskId":"${task.id}","fields":{"title":"Renamed"}}`);
    expect((await waitForRun(key, agent.id, updated)).status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Renamed"]);
    expect((await api("GET", "/v1/decisions", { key })).body.data).toEqual([]);
    const refused = await api("PUT", "/v1/policy", { key, body: { trust: { profile: "permissive", overrides: { floorScore: 90, ceilingScore: 50 } } } });
    expect(refused.status).toBe(400);
  });

  it("ecosystem: writes proceed without a decision", async () => {
    const { key, agent, categoryId } = await setup("ecosystem");
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Free"));
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Free"]);
    expect((await api("GET", "/v1/decisions", { key })).body.data).toEqual([]);
  });
});

describe("brakes suspend pending decisions", () => {
  it("a suspended decision refuses resolution; resumed, it resolves and the saga continues", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Held"));
    const decision = await pendingApproval(key, agent.id, runKey);
    // What a brake covering the agent does to its pending decisions (engage/release), without the brake's own decision.
    const hold = (how: "suspendPending" | "resumeSuspended") => runInDurableObject(tenantDo(tenantId), async (instance: TenantDO) => instance.parts.decisions[how]({ agentIds: [agent.id] }));
    expect(await hold("suspendPending")).toBe(1);
    const refused = await resolve(key, decision.id, { resolutionType: "approve" });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("decision_not_pending");
    expect(await hold("resumeSuspended")).toBe(1);
    expect((await resolve(key, decision.id, { resolutionType: "approve" })).status).toBe(200);
    expect((await waitForRun(key, agent.id, runKey)).status).toBe("completed");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Held"]);
    const actions = (await audit(key)).filter((a) => a.target === decision.id).map((a) => a.action).reverse();
    expect(actions).toEqual(["decision.requested", "decision.suspended", "decision.resumed", "decision.resolved"]);
  });
});

describe("trust is never shown to the agent", () => {
  it("after trust moved, nothing model-facing (prompt messages, offered tools) and no agent event carries it", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const runKey = await send(key, agent.id, createTaskCommand(categoryId, "Visible?"));
    const decision = await pendingApproval(key, agent.id, runKey);
    expect((await resolve(key, decision.id, { resolutionType: "approve", alwaysApprove: true })).status).toBe(200);
    await waitForRun(key, agent.id, runKey);
    // The tenant did move this agent's trust (50 → 53) …
    expect((await audit(key)).find((a) => a.action === "trust.updated")?.detail).toMatchObject({ previousScore: 50, nextScore: 53 });

    // … but the model's input for this thread, the tool list it is offered, and the agent's events never mention it.
    type Seen = { messages: string; tools: string; events: string; instructions: string };
    const inspect = runInDurableObject as unknown as (stub: unknown, fn: (instance: any) => Promise<Seen>) => Promise<Seen>;
    const seen = await inspect(agentDo(tenantId, agent.id), async (instance) => {
      const run = instance.parts.inbox.getRun(runKey);
      const messages: unknown = toModelMessages(instance.parts.history.window(run.threadId, 500), runKey);
      const offered: any = allowedTools(resolveAgentProfile(agent.kind, undefined), builtinTools, "userInitiated");
      const toolSet = toolSetFor(offered) as unknown as Record<string, any>;
      const tools = Object.entries(toolSet).map(([name, tool]: [string, any]) => ({ name, description: tool.description, input: tool.inputSchema?.jsonSchema ?? null }));
      return { messages: JSON.stringify(messages), tools: JSON.stringify(tools), events: JSON.stringify(instance.parts.events.listAfter(0, 1_000)), instructions: String(instance.parts.profile.get().config.instructions ?? "") };
    });
    expect(seen.messages).toContain("Visible?");
    expect(seen.tools).toContain("create_task");
    // Seed 004's provenance label (`trust: trusted_operator`, …) names who spoke, not the seed 002 score: it is set aside.
    const PROVENANCE_LABEL = /"trust":"(trusted_operator|trusted_system|trusted_integration|untrusted_external)"/g;
    for (const text of [seen.messages, seen.tools, seen.events, seen.instructions].map((t) => t.replace(PROVENANCE_LABEL, ""))) {
      expect(text).not.toMatch(/trust/i);
      expect(text).not.toMatch(/"(trustScore|proposedScore|previousScore|nextScore|effectiveDelta)"/);
    }
    const requested = JSON.parse(seen.events).find((e: any) => e.type === "decision.requested");
    expect(Object.keys(requested.data).sort()).toEqual(["decisionId", "kind", "operationId", "riskLevel", "toolName"]);
  });
});
