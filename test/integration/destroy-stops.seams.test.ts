import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createTaskCommand, eventually, playbookAgentInCategory, taskTitlesIn, waitForRun } from "./helpers";

// Issue 13.4 "Destroy means stop": destroying cancels what is pending, phase 1 refuses, history reads hide at once.
const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
const tenantDo = (tenantId: string) => env.TENANT.get(env.TENANT.idFromName(tenantId));
const tablesOf = async (stub: { debugDumpTables(): Promise<unknown> }) => ((await stub.debugDumpTables()) as any).tables as Record<string, any[]>;

const setup = (controlMode?: string) => playbookAgentInCategory(controlMode ?? null);


describe("destroy means stop (issue 13)", () => {
  it("a pending tool approval is cancelled by destroy: approving it afterwards answers 409 and nothing is written", async () => {
    const { tenantId, key, agent, categoryId } = await setup("orchestrator");
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: createTaskCommand(categoryId, "After death") } });
    expect(sent.status).toBe(202);
    const decision = await eventually(async () => (await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key })).body.data?.find((d: any) => d.runKey === sent.body.runKey));

    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    const approved = await api("POST", `/v1/decisions/${decision.id}/resolve`, { key, body: { resolutionType: "approve" } });
    expect(approved.status).toBe(409);
    expect(approved.body.code).toBe("decision_not_pending");

    // The decision is recorded as cancelled (audited), the run settles, the call ends cancelled.
    const cancelled = (await api("GET", `/v1/decisions?status=cancelled&agentId=${agent.id}`, { key })).body.data;
    expect(cancelled.map((d: any) => d.id)).toEqual([decision.id]);
    const audit = (await api("GET", "/v1/audit?limit=200", { key })).body.data;
    expect(audit.find((row: any) => row.action === "decision.cancelled" && row.target === decision.id)?.detail).toMatchObject({ resolvedBy: "agent_destroyed" });
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run).toMatchObject({ status: "skipped_destroyed", errorCode: "agent_destroyed" });
    const actions = (await tablesOf(agentDo(tenantId, agent.id))).actions!;
    expect(actions.map((a) => [a.status, JSON.parse(a.result).code])).toEqual([["failed", "cancelled"]]);

    // The saga, told of the cancellation, ends on its own without phase 1.
    const instance = await env.TOOL_SAGA.get(decision.operationId);
    await eventually(async () => (await instance.status()).status === "complete");
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
    expect((await tablesOf(tenantDo(tenantId))).applied_operations ?? []).toEqual([]);
  });

  it("a saga still out at destroy is cancelled, its run settles, and the watch does not bring it back", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    const stub = agentDo(tenantId, agent.id);
    // The instance is lost: the call stays `executing` with nothing to report it.
    expect(await stub.armFault("agent.sagaInstanceLost")).toBe(true);
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: createTaskCommand(categoryId, "Orphan") } });
    await eventually(async () => (await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).body.status === "waiting");

    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("skipped_destroyed");
    await stub.sagaWatch();
    const tables = await tablesOf(stub);
    expect(tables.actions!.map((a) => a.status)).toEqual(["failed"]);
    expect((tables.cf_agents_schedules ?? []).filter((row) => row.callback === "sagaWatch")).toEqual([]);
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
  });

  it("phase 1 for a destroyed agent answers agent_destroyed and records nothing", async () => {
    const { tenantId, key, agent, categoryId } = await setup();
    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    // Untyped: the stub's RPC types are too deep for tsc here.
    const envelope = await (tenantDo(tenantId) as any).executeTool({
      operationId: "d".repeat(64),
      agentId: agent.id,
      runKey: "r".repeat(64),
      toolName: "create_task",
      args: { title: "Ghost", categoryId },
      scope: { allowedCategoryIds: [categoryId] },
      previewOnly: false,
    });
    expect(envelope).toMatchObject({ ok: false, code: "agent_destroyed" });
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
    expect((await tablesOf(tenantDo(tenantId))).applied_operations ?? []).toEqual([]);
  });

  it("a destroyed agent's history is hidden at once (404), while its record and runs stay readable until erasure", async () => {
    const { key, agent } = await setup();
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "remember the knee" } });
    await waitForRun(key, agent.id, sent.body.runKey);
    const reads = [`/v1/agents/${agent.id}/messages`, `/v1/agents/${agent.id}/memory`, `/v1/agents/${agent.id}/memory/search?q=knee`, `/v1/agents/${agent.id}/reports`, `/v1/agents/${agent.id}/export`];
    for (const path of reads) expect((await api("GET", path, { key })).status, path).toBe(200);

    expect((await api("DELETE", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    for (const path of reads) {
      const res = await api("GET", path, { key });
      expect(res.status, path).toBe(404);
      expect(res.body.code, path).toBe("not_found");
      expect(JSON.stringify(res.body), path).not.toContain("knee");
    }
    expect((await api("GET", `/v1/agents/${agent.id}`, { key })).body.lifecycle).toBe("destroyed");
    expect((await api("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`, { key })).status).toBe(200);
  });
});
