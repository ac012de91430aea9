import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

async function tryCreateTask(key: string, agent: any, categoryId: string) {
  const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `/tool create_task {"title":"T","categoryId":"${categoryId}"}` } });
  await waitForRun(key, agent.id, sent.body.runKey);
  return (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.find((m: any) => m.kind === "toolResult").content;
}

describe("per-agent capability overrides", () => {
  it("a grant lets an agent of a read-only kind write; a revoke stops a coach; denyTools names one tool", async () => {
    const { key } = await createTenant();
    const category = (await api("POST", "/v1/journal/categories", { key, body: { name: "Gym" } })).body;
    const common = { model: "builtin:playbook", allowedCategoryIds: [category.id] };

    const reader = await createAgent(key, { ...common, kind: "assistant" });
    expect(await tryCreateTask(key, reader, category.id)).toMatchObject({ ok: false, code: "capability_denied" });

    const granted = await createAgent(key, { ...common, kind: "assistant", capabilities: { grant: ["taskWrite"], maxRiskLevel: "medium" } });
    expect(await tryCreateTask(key, granted, category.id)).toMatchObject({ ok: true });

    const revoked = await createAgent(key, { ...common, kind: "coach", capabilities: { revoke: ["taskWrite"] } });
    expect(await tryCreateTask(key, revoked, category.id)).toMatchObject({ ok: false, code: "capability_denied" });

    const denied = await createAgent(key, { ...common, kind: "coach" });
    const patched = await api("PATCH", `/v1/agents/${denied.id}`, { key, body: { capabilities: { denyTools: ["create_task"] } } });
    expect(patched.body.config.capabilities.denyTools).toEqual(["create_task"]);
    expect(await tryCreateTask(key, denied, category.id)).toMatchObject({ ok: false, code: "tool_denied" });

    const bad = await api("POST", "/v1/agents", { key, body: { kind: "coach", displayName: "x", capabilities: { grant: ["everything"] } } });
    expect(bad.status).toBe(400);
  });
});
