import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runKeys } from "../../src/core/ids/run-keys";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

type OnComplete = "report_result_to_parent" | "destroy_child_on_success" | "keep_child_active";

/** A builtin:playbook parent that delegates on "delegate …"; children inherit the playbook and answer "research …". */
function lead(spawnArgs: Record<string, unknown>, extraRules: unknown[] = []) {
  return {
    kind: "orchestrator",
    displayName: "Lead",
    model: "builtin:playbook",
    allowedCategoryIds: ["gym", "work"],
    capabilities: { grant: ["spawn"] },
    budgets: { tokens: 100_000 },
    playbook: {
      rules: [
        { when: { reason: "child" }, reply: "child reported: {{observation.reply}}" },
        { when: { textPattern: "^research" }, reply: "finding for {{text}}" },
        ...extraRules,
        {
          when: { textPattern: "^delegate" },
          tools: [{ name: "spawn_agent", args: { goal: "research {{text}}", requestedAgentKind: "helper", allowedCategoryIds: ["gym"], allowedTools: ["memory_search"], tokenBudget: 1_000, ...spawnArgs } }],
          reply: "delegated",
        },
      ],
    },
  };
}

async function children(key: string, parentId: string): Promise<any[]> {
  const all = (await api("GET", "/v1/agents?include=children&limit=200", { key })).body.data as any[];
  return all.filter((agent) => agent.config.lineage?.parentId === parentId);
}

/** Sends "delegate …" and waits for the parent's run; returns it with its spawn_agent tool result. */
async function delegate(key: string, parentId: string, text = "delegate gym plan") {
  const sent = await api("POST", `/v1/agents/${parentId}/messages`, { key, body: { text } });
  expect(sent.status).toBe(202);
  const run = await waitForRun(key, parentId, sent.body.runKey);
  const results = (await api("GET", `/v1/agents/${parentId}/messages?limit=200`, { key })).body.data.filter((m: any) => m.kind === "toolResult" && m.metadata.toolName === "spawn_agent");
  return { run, results };
}

const childRunKeyOf = (child: any) => runKeys.manual(child.id, `spawn:${child.config.lineage.spawnOperationId}`);

describe("delegation: spawn_agent", () => {
  it("spawns a child with lineage and a projected input; its completion wakes the parent with reason child", async () => {
    const { tenantId, key } = await createTenant();
    const parent = await createAgent(key, lead({ inputRefs: [{ type: "task", id: "t1" }] }));
    const { run, results } = await delegate(key, parent.id);
    expect(run.status).toBe("completed");
    expect(results).toHaveLength(1);
    expect(results[0].content).toMatchObject({ ok: true, output: { status: "spawned", depth: 1 } });

    const [child] = await children(key, parent.id);
    expect(child).toMatchObject({
      id: results[0].content.output.childId,
      kind: "helper",
      mode: "autonomous",
      allowedCategoryIds: ["gym"],
      config: { budgets: { tokens: 1_000 }, lineage: { parentId: parent.id, rootId: parent.id, depth: 1, onComplete: "report_result_to_parent", maxSteps: 4, tokenBudget: 1_000 } },
    });
    expect(child.config.capabilities.grant).toEqual(["memoryRead"]);
    expect(child.config.capabilities.denyTools).toContain("spawn_agent");

    // The child got the goal and the references — never the parent's conversation.
    const childRun = await waitForRun(key, child.id, childRunKeyOf(child));
    expect(childRun).toMatchObject({ status: "completed", reason: "manual" });
    const childMessages = (await api("GET", `/v1/agents/${child.id}/messages`, { key })).body.data;
    const input = childMessages.find((m: any) => m.kind === "user");
    expect(input.text).toBe("research delegate gym plan\n\nInput references: task:t1");
    expect(childMessages.some((m: any) => m.text === "delegate gym plan")).toBe(false);
    const stored = (await agentDo(tenantId, child.id).listEvents(0, 100)) as any[];
    expect(stored.find((e) => e.type === "wake.enqueued")?.data.reason).toBe("manual");

    // The parent wakes once with reason child, deterministically keyed, carrying the projected reply as data.
    const wakeKey = runKeys.child(parent.id, child.id, childRunKeyOf(child));
    const parentWake = await waitForRun(key, parent.id, wakeKey);
    expect(parentWake).toMatchObject({ reason: "child", status: "completed", threadId: run.threadId });
    const parentMessages = (await api("GET", `/v1/agents/${parent.id}/messages?limit=200`, { key })).body.data;
    const observation = parentMessages.find((m: any) => m.kind === "observation" && m.metadata.runKey === wakeKey);
    expect(observation.metadata.authority).toBe("external_evidence");
    expect(observation.content).toEqual({ childId: child.id, childRunKey: childRunKeyOf(child), status: "completed", errorCode: null, reply: "finding for research delegate gym plan\n\nInput references: task:t1" });
    expect(parentMessages.find((m: any) => m.kind === "assistant" && m.metadata.runKey === wakeKey)?.text).toContain("child reported: finding for research");

    // Lineage is visible in the spawning run's trace, with the admission decision.
    const detail = (await api("GET", `/v1/agents/${parent.id}/runs/${run.runKey}`, { key })).body;
    expect(detail.trace.children).toEqual([expect.objectContaining({ childId: child.id, status: "completed", onComplete: "report_result_to_parent" })]);
    expect(detail.trace.policy).toContainEqual(expect.objectContaining({ gate: "spawn_admission", outcome: "allowed", subject: "spawn_agent" }));
    expect(detail.trace.toolCalls).toEqual([expect.objectContaining({ name: "spawn_agent", status: "completed", ok: true })]);

    // A replayed creation is the same child: no second agent, no second delegated run.
    const again = await agentDo(tenantId, child.id).createChildAgent(tenantId, child.id, { kind: "helper", displayName: "x" } as never, child.config.lineage, {
      runKey: childRunKeyOf(child),
      reason: "manual",
      threadId: childRun.threadId,
      authority: "runtime_instruction",
      input: { text: "research again" },
    });
    expect(again).toMatchObject({ ok: true, agent: { id: child.id } });
    expect((await api("GET", `/v1/agents/${child.id}/runs`, { key })).body.data).toHaveLength(1);
    expect(await children(key, parent.id)).toHaveLength(1);

    const audit = (await api("GET", "/v1/audit", { key })).body.data;
    expect(audit).toContainEqual(expect.objectContaining({ action: "agent.spawned", target: child.id, actor: `agent:${parent.id}` }));
  });

  it("applies onComplete: report pauses the child, destroy_child_on_success destroys it, keep_child_active leaves it active", async () => {
    const { key } = await createTenant();
    const expected: Record<OnComplete, string> = { report_result_to_parent: "dormant", destroy_child_on_success: "destroyed", keep_child_active: "active" };
    for (const [onComplete, lifecycle] of Object.entries(expected)) {
      const parent = await createAgent(key, lead({ onComplete }));
      await delegate(key, parent.id);
      const [spawned] = await children(key, parent.id);
      await waitForRun(key, parent.id, runKeys.child(parent.id, spawned.id, childRunKeyOf(spawned)));
      const settled = await eventually(async () => {
        const child = (await api("GET", `/v1/agents/${spawned.id}`, { key })).body;
        return child.lifecycle === lifecycle ? child : undefined;
      });
      expect(settled.lifecycle, onComplete).toBe(lifecycle);
    }
  });

  it("a child past its ttl is destroyed by its lineage alarm; before then the alarm changes nothing", async () => {
    const { tenantId, key } = await createTenant();
    const parent = await createAgent(key, lead({ onComplete: "keep_child_active", ttl: 600 }));
    await delegate(key, parent.id);
    const [child] = await children(key, parent.id);
    expect(Date.parse(child.config.lineage.expiresAt) - Date.parse(child.createdAt)).toBeGreaterThanOrEqual(599_000);
    await waitForRun(key, parent.id, runKeys.child(parent.id, child.id, childRunKeyOf(child)));
    const stub = agentDo(tenantId, child.id);
    await stub.expireLineage();
    expect((await api("GET", `/v1/agents/${child.id}`, { key })).body.lifecycle).toBe("active");
    // Move the deadline into the past, as if the ttl had run out, and fire the alarm's callback.
    const past = new Date(Date.now() - 1_000).toISOString();
    await runInDurableObject(stub, (instance, state) => {
      const row = state.storage.sql.exec("SELECT config FROM agent_meta").one() as { config: string };
      const config = JSON.parse(row.config);
      config.lineage.expiresAt = past;
      state.storage.sql.exec("UPDATE agent_meta SET config = ?", JSON.stringify(config));
    });
    await stub.expireLineage();
    expect((await api("GET", `/v1/agents/${child.id}`, { key })).body.lifecycle).toBe("destroyed");
    expect(await children(key, parent.id)).toHaveLength(1);
    expect((await api("GET", "/v1/agents", { key })).body.data.map((a: any) => a.id)).toEqual([parent.id]);
  });

  it("hides children from GET /v1/agents unless include=children", async () => {
    const { key } = await createTenant();
    const parent = await createAgent(key, lead({ onComplete: "keep_child_active" }));
    await delegate(key, parent.id);
    const [child] = await children(key, parent.id);
    const plain = (await api("GET", "/v1/agents", { key })).body.data.map((a: any) => a.id);
    expect(plain).toEqual([parent.id]);
    const all = (await api("GET", "/v1/agents?include=children", { key })).body.data.map((a: any) => a.id);
    expect(all.sort()).toEqual([parent.id, child.id].sort());
    // The child itself stays addressable.
    expect((await api("GET", `/v1/agents/${child.id}`, { key })).status).toBe(200);
    expect((await api("GET", "/v1/agents?include=everything", { key })).status).toBe(400);
  });
});

describe("delegation: admission denials", () => {
  it("denies tools the parent may not call itself (spawn_denied, tools_not_subset); no child is made", async () => {
    const { key } = await createTenant();
    const parent = await createAgent(key, lead({ allowedTools: ["memory_search", "create_or_update_rating"] }));
    const { run, results } = await delegate(key, parent.id);
    expect(run.status).toBe("completed");
    expect(results[0].content).toMatchObject({ ok: false, code: "spawn_denied", details: { reason: "tools_not_subset" } });
    expect(results[0].content.message).toContain("create_or_update_rating");
    expect(await children(key, parent.id)).toEqual([]);
    const detail = (await api("GET", `/v1/agents/${parent.id}/runs/${run.runKey}`, { key })).body;
    expect(detail.trace.policy).toContainEqual(expect.objectContaining({ gate: "spawn_admission", outcome: "denied", code: "spawn_denied", detail: expect.objectContaining({ reason: "tools_not_subset" }) }));
    const audit = (await api("GET", "/v1/audit", { key })).body.data;
    expect(audit).toContainEqual(expect.objectContaining({ action: "agent.spawn_denied", detail: expect.objectContaining({ reason: "tools_not_subset" }) }));
  });

  it("denies categories outside the parent's scope and a parent with no token budget", async () => {
    const { key } = await createTenant();
    const outside = await createAgent(key, lead({ allowedCategoryIds: ["gym", "finance"] }));
    expect((await delegate(key, outside.id)).results[0].content).toMatchObject({ ok: false, code: "spawn_denied", details: { reason: "categories_not_subset" } });
    const broke = await createAgent(key, { ...lead({}), budgets: undefined });
    expect((await delegate(key, broke.id)).results[0].content).toMatchObject({ ok: false, code: "spawn_denied", details: { reason: "no_budget" } });
  });

  it("admits five live children and denies the sixth", async () => {
    const { key } = await createTenant();
    const spawnCall = (n: number) => ({
      name: "spawn_agent",
      args: { goal: `research part ${n}`, requestedAgentKind: "helper", allowedTools: [], tokenBudget: 100, onComplete: "keep_child_active" },
    });
    const parent = await createAgent(key, lead({}, [{ when: { textPattern: "^fan out" }, tools: [1, 2, 3, 4, 5, 6].map(spawnCall), reply: "fanned out" }]));
    const { results } = await delegate(key, parent.id, "fan out");
    const byGoal = results.sort((a: any, b: any) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    expect(byGoal.filter((r: any) => r.content.ok)).toHaveLength(5);
    const denied = byGoal.filter((r: any) => !r.content.ok);
    expect(denied).toHaveLength(1);
    expect(denied[0].content).toMatchObject({ code: "spawn_denied", details: { reason: "too_many_children" } });
    expect(await children(key, parent.id)).toHaveLength(5);
  });

  it("allows depth 2 and denies a spawn at depth 3", async () => {
    const { key } = await createTenant();
    const down = (goal: string, tokenBudget: number) => ({ name: "spawn_agent", args: { goal, requestedAgentKind: "helper", allowedTools: ["spawn_agent"], tokenBudget, onComplete: "keep_child_active" } });
    const parent = await createAgent(
      key,
      lead({ goal: "level1 go", allowedTools: ["spawn_agent"], tokenBudget: 20_000, onComplete: "keep_child_active" }, [
        { when: { textPattern: "^level1" }, tools: [down("level2 go", 5_000)], reply: "level1 delegated" },
        { when: { textPattern: "^level2" }, tools: [down("level3 go", 1_000)], reply: "level2 tried" },
      ]),
    );
    await delegate(key, parent.id);
    const [level1] = await children(key, parent.id);
    expect(level1.config.lineage.depth).toBe(1);
    const level2 = await eventually(async () => (await children(key, level1.id))[0]);
    expect(level2.config.lineage).toMatchObject({ depth: 2, parentId: level1.id, rootId: parent.id });
    await waitForRun(key, level2.id, childRunKeyOf(level2));
    const attempt = (await api("GET", `/v1/agents/${level2.id}/messages`, { key })).body.data.find((m: any) => m.kind === "toolResult");
    expect(attempt.content).toMatchObject({ ok: false, code: "spawn_denied", details: { reason: "depth_exceeded" } });
    expect(await children(key, level2.id)).toEqual([]);
  });

  it("a brake on spawn_agent stops spawning", async () => {
    const { key } = await createTenant();
    const parent = await createAgent(key, lead({}));
    const brake = await api("POST", "/v1/brakes", { key, body: { scope: "tool", target: "spawn_agent", behaviour: "pause", reason: "no more children" } });
    expect(brake.status).toBe(201);
    const { results } = await delegate(key, parent.id);
    // The governance gate refuses first when wired (brake_engaged); spawn admission's own kill switch answers spawn_denied otherwise.
    expect(results[0].content).toMatchObject({ ok: false });
    expect(["brake_engaged", "spawn_denied"]).toContain(results[0].content.code);
    expect(await children(key, parent.id)).toEqual([]);
  });
});
