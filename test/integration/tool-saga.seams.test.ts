import { env, runInDurableObject } from "cloudflare:test";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

async function setup(extra: Record<string, unknown> = {}) {
  const { tenantId, key } = await createTenant();
  const category = await api("POST", "/v1/journal/categories", { key, body: { name: "Gym" } });
  expect(category.status).toBe(201);
  const agent = await createAgent(key, {
    kind: "coach",
    model: "builtin:playbook",
    allowedCategoryIds: [category.body.id],
    playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
    ...extra,
  });
  return { tenantId, key, agent, categoryId: category.body.id as string };
}

const tasksIn = async (key: string, categoryId: string) => (await api("GET", `/v1/journal/tasks?categoryId=${categoryId}`, { key })).body.data as any[];

describe("mutating tools run as sagas: crashes at each saga step", () => {
  for (const point of ["saga.phase1.beforeApply", "saga.phase1.afterApply", "saga.betweenPhases", "saga.phase2.beforeRecord", "saga.phase2.afterRecord"]) {
    it(`converges on exactly one mutation after a crash at ${point}, with the saga watch running alongside`, async () => {
      const { tenantId, key, agent, categoryId } = await setup();
      const stub = agentDo(tenantId, agent.id);
      expect(await stub.armFault(point)).toBe(true);
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool create_task {"title":"Once","categoryId":"${categoryId}"}` } });
      // Each pass is what the alarm runs; passes while the saga is still under way must change nothing.
      const run = await eventually(async () => {
        await stub.sagaWatch();
        return terminalRun(key, agent.id, sent.body.runKey);
      });
      await expectExactlyOneEffect(stub, key, agent.id, categoryId, run);
    });
  }
});

const terminalRun = async (key: string, agentId: string, runKey: string) => {
  const res = await api("GET", `/v1/agents/${agentId}/runs/${runKey}`, { key });
  return res.status === 200 && !["queued", "running", "waiting", "ready"].includes(res.body.status) ? res.body : undefined;
};

const sagaWatchRows = async (stub: ReturnType<typeof agentDo>) => {
  return (await runInDurableObject(stub, async (instance: AgentDO) => instance.listSchedules())).filter((row) => row.callback === "sagaWatch");
};

/** Seed 001's convergence: one journal write, one recorded toolResult, a completed run, no saga left to watch. */
async function expectExactlyOneEffect(stub: ReturnType<typeof agentDo>, key: string, agentId: string, categoryId: string, run: any) {
  expect(run.status).toBe("completed");
  expect((await tasksIn(key, categoryId)).map((t) => t.title)).toEqual(["Once"]);
  const results = (await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data.filter((m: any) => m.kind === "toolResult");
  expect(results).toHaveLength(1);
  expect(results[0].content).toMatchObject({ ok: true, toolName: "create_task" });
  expect(await sagaWatchRows(stub)).toEqual([]);
}

describe("sagas converge when their instance is lost or errors (issue 13)", () => {
  const operationOf = async (key: string, agentId: string) =>
    eventually(async () => (await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data.find((m: any) => m.kind === "action")?.content.operationId as string | undefined);

  it("a saga whose instance was never created (a crash right after the plan) is created again by the watch, and the run completes", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const stub = agentDo(tenantId, agent.id);
    expect(await stub.armFault("agent.sagaInstanceLost")).toBe(true);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool create_task {"title":"Once","categoryId":"${categoryId}"}` } });
    // The stuck state of the report: the run waits, its call is executing, and no instance exists.
    await eventually(async () => (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body.status === "waiting");
    const operationId = await operationOf(key, agent.id);
    await expect(env.TOOL_SAGA.get(operationId)).rejects.toThrow();
    expect(await tasksIn(key, categoryId)).toEqual([]);
    // While it waits, the watch alarm is armed (not only a one-shot watchdog).
    expect(await sagaWatchRows(stub)).toHaveLength(1);
    await stub.sagaWatch();
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    for (let i = 0; i < 2; i++) await stub.sagaWatch();
    await expectExactlyOneEffect(stub, key, agent.id, categoryId, run);
  });

  for (const point of ["saga.phase1.exhausted", "saga.phase2.exhausted"]) {
    it(`a saga that errors (${point}) is settled by the watch with exactly one mutation`, async () => {
      const { tenantId, key, agent, categoryId } = await setup();
      const stub = agentDo(tenantId, agent.id);
      expect(await stub.armFault(point)).toBe(true);
      const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool create_task {"title":"Once","categoryId":"${categoryId}"}` } });
      const operationId = await operationOf(key, agent.id);
      // The instance is created off the request path: it may not exist yet when the turn answers.
      await eventually(async () => {
        const instance = await env.TOOL_SAGA.get(operationId).catch(() => null);
        return instance !== null && (await instance.status()).status === "errored";
      });
      // Errored without reporting: the run still waits on it, and phase 1 applied only if it got past it.
      expect((await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body.status).toBe("waiting");
      expect(await tasksIn(key, categoryId)).toHaveLength(point === "saga.phase2.exhausted" ? 1 : 0);
      await stub.sagaWatch();
      const run = await waitForRun(key, agent.id, sent.body.runKey);
      for (let i = 0; i < 2; i++) await stub.sagaWatch();
      await expectExactlyOneEffect(stub, key, agent.id, categoryId, run);
    });
  }

  it("the agent persists its name for alarms that arrive without one (the SDK's fallback record)", async () => {
    const { tenantId, agent } = await setup();
    const tables = ((await agentDo(tenantId, agent.id).debugDumpTables()) as any).tables as Record<string, unknown[]>;
    expect(tables._cf_KV).toContainEqual({ key: "__ps_name", value: `${tenantId}:${agent.id}` });
  });
});
