import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

async function engage(key: string, body: Record<string, unknown>) {
  const res = await api("POST", "/v1/brakes", { key, body: { behaviour: "pause", reason: "incident review", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function auditActions(key: string): Promise<Array<{ action: string; target: string | null; detail: any }>> {
  return (await api("GET", "/v1/audit?limit=200", { key })).body.data;
}

describe("brakes: the API", () => {
  it("engages, lists and releases a brake, with audit entries for both", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const brake = await engage(key, { scope: "agent", target: agent.id, behaviour: "kill" });
    expect(brake).toMatchObject({ scope: "agent", target: agent.id, behaviour: "kill", release: "manual", active: true, releasedAt: null, decisionId: null });
    expect(brake.id).toMatch(/^brk_/);

    const listed = await api("GET", "/v1/brakes?status=active", { key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [brake], nextCursor: null });

    const released = await api("POST", `/v1/brakes/${brake.id}/release`, { key });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id: brake.id, active: false, releasedBy: expect.stringMatching(/^key:/) });
    const again = await api("POST", `/v1/brakes/${brake.id}/release`, { key });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");

    expect((await api("GET", "/v1/brakes?status=active", { key })).body.data).toEqual([]);
    expect((await api("GET", "/v1/brakes?status=released", { key })).body.data.map((b: any) => b.id)).toEqual([brake.id]);
    const audit = await auditActions(key);
    expect(audit.filter((entry) => entry.target === brake.id).map((entry) => entry.action)).toEqual(["brake.released", "brake.engaged"]);
  });

  it("validates input: target per scope, releaseAt with timer only, unknown agents, bad JSON", async () => {
    const { key } = await createTenant();
    const bad = [
      { scope: "agent", behaviour: "pause", reason: "x" },
      { scope: "all", target: "x", behaviour: "pause", reason: "x" },
      { scope: "all", behaviour: "pause", reason: "x", release: "timer" },
      { scope: "all", behaviour: "pause", reason: "x", releaseAt: new Date(Date.now() + 60_000).toISOString() },
      { scope: "all", behaviour: "stop", reason: "x" },
      { scope: "all", behaviour: "pause" },
      { scope: "all", behaviour: "pause", reason: "x", extra: 1 },
    ];
    for (const body of bad) {
      const res = await api("POST", "/v1/brakes", { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
    const past = await api("POST", "/v1/brakes", { key, body: { scope: "all", behaviour: "pause", reason: "x", release: "timer", releaseAt: new Date(Date.now() - 1000).toISOString() } });
    expect(past.status).toBe(400);
    const ghost = await api("POST", "/v1/brakes", { key, body: { scope: "agent", target: "ag_nobody", behaviour: "pause", reason: "x" } });
    expect(ghost.status).toBe(422);
    expect(ghost.body.code).toBe("invalid_reference");
    const notJson = await api("POST", "/v1/brakes", { key, body: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect((await api("GET", "/v1/brakes", { key })).body.data).toEqual([]);
  });

  it("needs an admin API key to engage; other tenants cannot see or release it; Idempotency-Key replays", async () => {
    const { key } = await createTenant();
    const other = await createTenant("other");
    const reader = (await api("POST", "/v1/keys", { key, body: { name: "reader", scopes: ["agents:read", "agents:write"] } })).body.key;
    const refused = await api("POST", "/v1/brakes", { key: reader, body: { scope: "all", behaviour: "pause", reason: "x" } });
    expect(refused.status).toBe(403);

    const headers = { "idempotency-key": "brake-once" };
    const first = await api("POST", "/v1/brakes", { key, headers, body: { scope: "all", behaviour: "pause", reason: "x" } });
    const second = await api("POST", "/v1/brakes", { key, headers, body: { scope: "all", behaviour: "pause", reason: "x" } });
    expect(first.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect((await api("GET", "/v1/brakes", { key })).body.data).toHaveLength(1);
    expect((await api("POST", "/v1/brakes", { key, headers, body: { scope: "all", behaviour: "kill", reason: "x" } })).status).toBe(409);

    expect((await api("GET", "/v1/brakes", { key: other.key })).body.data).toEqual([]);
    expect((await api("POST", `/v1/brakes/${first.body.id}/release`, { key: other.key })).status).toBe(404);
    expect((await api("GET", "/v1/brakes", { key: reader })).status).toBe(200);
  });
});

describe("brakes: what they stop", () => {
  it("refuses new messages and manual wakes with 423 brake_engaged, for the braked agent only, until released", async () => {
    const { key } = await createTenant();
    const coach = await createAgent(key, { kind: "coach" });
    const planner = await createAgent(key, { kind: "planner", displayName: "Planner" });
    const brake = await engage(key, { scope: "kind", target: "coach" });

    const message = await api("POST", `/v1/agents/${coach.id}/messages`, { key, body: { text: "hello" } });
    expect(message.status).toBe(423);
    expect(message.body.code).toBe("brake_engaged");
    expect(message.body.detail).toContain(brake.id);
    const wake = await api("POST", `/v1/agents/${coach.id}/wake`, { key });
    expect(wake.status).toBe(423);
    expect((await api("GET", `/v1/agents/${coach.id}/runs`, { key })).body.data).toEqual([]);

    const other = await api("POST", `/v1/agents/${planner.id}/messages`, { key, body: { text: "hello" } });
    expect(other.status).toBe(202);
    expect((await waitForRun(key, planner.id, other.body.runKey)).status).toBe("completed");

    await api("POST", `/v1/brakes/${brake.id}/release`, { key });
    const after = await api("POST", `/v1/agents/${coach.id}/messages`, { key, body: { text: "hello again" } });
    expect(after.status).toBe(202);
    expect((await waitForRun(key, coach.id, after.body.runKey)).status).toBe("completed");
  });

  it("records wakes that arrive by other paths as skipped_sleeping/brake_engaged, never run", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { timers: [{ name: "nightly", spec: { kind: "interval", everySeconds: 3600 } }] });
    const timer = (await api("GET", `/v1/agents/${agent.id}/timers`, { key })).body.data[0];
    const brake = await engage(key, { scope: "all", behaviour: "kill" });
    const triggered = await api("POST", `/v1/agents/${agent.id}/timers/${timer.id}/trigger`, { key });
    expect(triggered.status).toBe(202);
    const run = await waitForRun(key, agent.id, triggered.body.runKey);
    expect(run).toMatchObject({ status: "skipped_sleeping", errorCode: "brake_engaged", startedAt: null });
    expect(run.trace).toMatchObject({ brakeId: brake.id, behaviour: "kill" });
    expect(run.trace.policy).toEqual([expect.objectContaining({ gate: "brake", outcome: "denied", code: "brake_engaged" })]);
    expect((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data).toEqual([]);
  });

  it("a tool brake blocks that tool (read or write) with a brake_engaged toolResult; the run goes on", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [], fallbackReply: "done" } });
    await engage(key, { scope: "tool", target: "list_allowed_categories", behaviour: "pause" });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "/tool list_allowed_categories {}\n/tool list_tasks_in_scope {}" } });
    expect(sent.status).toBe(202);
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    const results = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.filter((m: any) => m.kind === "toolResult");
    const byTool = Object.fromEntries(results.map((m: any) => [m.metadata.toolName, m.content]));
    expect(byTool.list_allowed_categories).toMatchObject({ ok: false, code: "brake_engaged" });
    expect(byTool.list_tasks_in_scope.ok).toBe(true);
    expect(run.trace.policy).toEqual([expect.objectContaining({ gate: "brake", code: "brake_engaged", subject: "list_allowed_categories" })]);
  });

  it("a timer brake lets go at releaseAt by itself", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    // Far enough ahead that engaging the brake and the "too early" message both land before it on a loaded machine.
    const releaseAt = new Date(Date.now() + 5_000).toISOString();
    const brake = await engage(key, { scope: "agent", target: agent.id, release: "timer", releaseAt });
    expect(brake).toMatchObject({ release: "timer", releaseAt, active: true });
    expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "too early" } })).status).toBe(423);
    const accepted = await eventually(async () => {
      const res = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "later" } });
      return res.status === 202 ? res : undefined;
    });
    expect((await waitForRun(key, agent.id, accepted.body.runKey)).status).toBe("completed");
    const listed = (await api("GET", "/v1/brakes", { key })).body.data[0];
    expect(listed).toMatchObject({ id: brake.id, active: false, releasedAt: releaseAt, releasedBy: "timer" });
    const audit = await auditActions(key);
    expect(audit.find((entry) => entry.target === brake.id && entry.action === "brake.released")?.detail).toMatchObject({ how: "timer" });
  });

  it("a decision brake opens a keep/release decision; choosing release releases it, keep leaves it engaged", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const kept = await engage(key, { scope: "agent", target: agent.id, release: "decision" });
    const released = await engage(key, { scope: "all", release: "decision" });
    expect(kept.decisionId).toMatch(/^dec_/);
    const pending = (await api("GET", "/v1/decisions?status=pending", { key })).body.data;
    const decision = pending.find((d: any) => d.id === released.decisionId);
    expect(decision).toMatchObject({ type: "decision/option", payload: { kind: "brake_release", brakeId: released.id } });
    expect(decision.payload.options.map((o: any) => o.id)).toEqual(["keep", "release"]);

    const badChoice = await api("POST", `/v1/decisions/${kept.decisionId}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "maybe" } });
    expect(badChoice.status).toBe(400);
    const keep = await api("POST", `/v1/decisions/${kept.decisionId}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "keep" } });
    expect(keep.status).toBe(200);
    const release = await api("POST", `/v1/decisions/${released.decisionId}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "release" } });
    expect(release.status).toBe(200);
    expect(release.body.status).toBe("resolved");
    expect((await api("POST", `/v1/decisions/${released.decisionId}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "release" } })).status).toBe(409);

    const brakes = Object.fromEntries((await api("GET", "/v1/brakes", { key })).body.data.map((b: any) => [b.id, b]));
    expect(brakes[released.id]).toMatchObject({ active: false, releasedBy: `decision:${released.decisionId}` });
    expect(brakes[kept.id]).toMatchObject({ active: true });
    expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "still braked" } })).status).toBe(423);
  });

  it("suspends the braked agent's pending decisions and resumes them on release", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [], fallbackReply: "asked" } });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool ask_user {"question":"Which day?","options":[{"id":"mon","label":"Monday"}]}' } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const question = (await api("GET", "/v1/decisions?status=pending", { key })).body.data.find((d: any) => d.agentId === agent.id);
    expect(question).toBeTruthy();

    const brake = await engage(key, { scope: "agent", target: agent.id });
    const held = (await api("GET", "/v1/decisions?status=suspended", { key })).body.data;
    expect(held.map((d: any) => d.id)).toEqual([question.id]);
    const answer = await api("POST", `/v1/decisions/${question.id}/resolve`, { key, body: { resolutionType: "choose_option", chosenOptionId: "mon" } });
    expect(answer.status).toBe(409);

    await api("POST", `/v1/brakes/${brake.id}/release`, { key });
    expect((await api("GET", "/v1/decisions?status=pending", { key })).body.data.map((d: any) => d.id)).toContain(question.id);
  });
});
