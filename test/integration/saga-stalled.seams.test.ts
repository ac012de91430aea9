import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { agentDo, api, createTaskCommand, eventually, freshInstance, playbookAgentInCategory, taskTitlesIn, waitForRun } from "./helpers";

/**
 * A saga instance that reports itself under way but never moves again — what the local Workflows engine leaves after
 * its process was killed — is settled by the agent: on the next activation at once, by the watch once the call has
 * been out for a watch interval. The engine's own recovery is not relied on.
 */
async function stalledTurn(point: "saga.stall.beforeApply" | "saga.stall.afterApply") {
  const { tenantId, key, agent, categoryId } = await playbookAgentInCategory(null);
  const stub = agentDo(tenantId, agent.id);
  expect(await stub.armFault(point)).toBe(true);
  const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: createTaskCommand(categoryId, "Once") } });
  expect(sent.status).toBe(202);
  const operationId = await eventually(async () => {
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data as any[];
    return messages.find((m) => m.kind === "action")?.content.operationId as string | undefined;
  });
  // Stalled: the instance sleeps where it stopped, the run waits on it, and phase 1 applied only past its point.
  await eventually(async () => {
    const instance = await env.TOOL_SAGA.get(operationId).catch(() => null);
    const status = instance ? (await instance.status()).status : null;
    const run = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
    return (status === "waiting" || status === "running") && run.status === "waiting";
  });
  expect(await taskTitlesIn(key, categoryId)).toEqual(point === "saga.stall.afterApply" ? ["Once"] : []);
  return { stub, key, agent, categoryId, runKey: sent.body.runKey as string, operationId };
}

async function expectOneEffect(key: string, agentId: string, categoryId: string, runKey: string) {
  const run = await waitForRun(key, agentId, runKey);
  expect(run.status).toBe("completed");
  expect(await taskTitlesIn(key, categoryId)).toEqual(["Once"]);
  const messages = (await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data as any[];
  expect(messages.filter((m) => m.kind === "toolResult").map((m) => m.content.ok)).toEqual([true]);
  expect(messages.find((m) => m.kind === "assistant" && m.metadata.final)?.text).toBe("done: Once");
}

describe("a saga instance that stalls is settled by the agent", () => {
  for (const point of ["saga.stall.beforeApply", "saga.stall.afterApply"] as const) {
    it(`the next activation settles a call whose instance stalled (${point}): one task, the run completes`, async () => {
      const { stub, key, agent, categoryId, runKey } = await stalledTurn(point);
      // The next activation after a restart: its saga recovery trusts no instance's progress.
      await runInDurableObject(stub, async (instance, state) => {
        freshInstance(instance, state);
        await eventually(async () => state.storage.sql.exec("SELECT status FROM runs WHERE run_key = ?", runKey).one().status === "completed");
      });
      await expectOneEffect(key, agent.id, categoryId, runKey);
    });
  }

  it("the watch leaves a call out for less than a watch interval to its instance, and settles it once it is older", async () => {
    const { stub, key, agent, categoryId, runKey, operationId } = await stalledTurn("saga.stall.afterApply");
    await stub.sagaWatch();
    expect((await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body.status).toBe("waiting");
    // The call has been out for a watch interval (its plan's last change moved back by that much).
    const past = new Date(Date.now() - config.run.sagaWatchSeconds * 1000 - 1_000).toISOString();
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec("UPDATE actions SET updated_at = ? WHERE operation_id = ?", past, operationId);
    });
    await stub.sagaWatch();
    await expectOneEffect(key, agent.id, categoryId, runKey);
  });
});
