import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/worker";
import { api, createAgent, createTenant, eventually, waitForRun } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

describe("runs", () => {
  it("a run that crashes mid-flight resumes and ends terminal, appending nothing twice", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    expect(await agentDo(tenantId, agent.id).armFault("run.afterReply")).toBe(true);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "survive" } });
    // The crash point follows the reply's append: once the reply is visible the first attempt has crashed
    // (a watchdog call while that attempt is still draining would join it rather than resume it).
    const crashed = await eventually(async () => {
      const run = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
      const replied = ((await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data ?? []).some((m: any) => m.kind === "assistant");
      return run.status === "running" && replied ? run : undefined;
    });
    expect(crashed.attempt).toBe(1);
    await agentDo(tenantId, agent.id).watchdog();
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run).toMatchObject({ status: "completed", attempt: 2 });
    expect(run.trace.resumed).toBe(true);
    const history = await api("GET", `/v1/agents/${agent.id}/messages`, { key });
    expect(history.body.data.map((m: any) => m.kind)).toEqual(["assistant", "user"]);
  });

  it("a run interrupted more than maxAttempts times ends failed_terminal, never stuck", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id);
    await stub.armFault("run.beforeModel", 3);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "doomed" } });
    // The watchdog resumes a crashed attempt, but one called while an attempt is still draining joins it: so it is
    // called until the run ends (not a fixed number of times after fixed pauses, which a loaded machine outruns).
    const run = await eventually(async () => {
      await stub.watchdog();
      const current = (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body;
      return ["queued", "running"].includes(current.status) ? undefined : current;
    });
    expect(run).toMatchObject({ status: "failed_terminal", errorCode: "interrupted_too_often", attempt: 4 });
  });
});
