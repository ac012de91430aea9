import { beforeAll, describe, expect, it } from "vitest";
import { VigilApiError, type VigilClient } from "../../src/client";
import type { VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;

beforeAll(async () => {
  server = sharedServer();
});

async function failure(call: Promise<unknown>): Promise<{ status: number; code: string; detail: string }> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof VigilApiError)) throw new Error(`expected an API error, got ${String(error)}`);
  return { status: error.status, code: error.code, detail: error.detail };
}

describe("agents", () => {
  let client: VigilClient;

  beforeAll(async () => {
    ({ client } = await server.tenant("agents"));
  });

  it("creates an agent with defaults and reads it back", async () => {
    const agent = await client.createAgent({ kind: "gym-coach", displayName: "  Coach  ", instructions: "Be brief." });
    expect(agent).toMatchObject({
      id: expect.stringMatching(/^ag_[0-9a-z]+$/),
      kind: "gym-coach",
      displayName: "Coach",
      lifecycle: "active",
      mode: "hybrid",
      allowedCategoryIds: [],
      version: 1,
      config: { modelId: "builtin:echo", instructions: "Be brief.", playbook: null },
    });
    expect(Date.parse(agent.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    await expect(client.getAgent(agent.id)).resolves.toEqual(agent);
    const state = await client.getAgentState(agent.id);
    expect(state).toMatchObject({ revision: 0, lastWakeAt: null, consecutiveFailureCount: 0, slots: {} });
  });

  it("lists agents oldest first with cursor pagination: every agent once, then nextCursor null", async () => {
    const { client: fresh } = await server.tenant("pagination");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await fresh.createAgent({ kind: "coach", displayName: `Agent ${i}` })).id);
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const page = await fresh.listAgents({ limit: 2, ...(cursor ? { cursor } : {}) });
      pageSizes.push(page.data.length);
      seen.push(...page.data.map((agent) => agent.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(created);
    const all = await fresh.listAgents({ limit: 5 });
    expect(all.data.map((agent) => agent.id)).toEqual(created);
    expect(all.nextCursor).toBeNull();
  });

  it("patches with optimistic concurrency: the right version wins, a stale one is 409 version_conflict", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Before" });
    const patched = await client.updateAgent(agent.id, { displayName: "After", mode: "interactive", version: agent.version });
    expect(patched).toMatchObject({ displayName: "After", mode: "interactive", version: agent.version + 1 });
    expect(await failure(client.updateAgent(agent.id, { displayName: "Lost update", version: agent.version }))).toMatchObject({ status: 409, code: "version_conflict" });
    const unversioned = await client.updateAgent(agent.id, { modelOptions: { chunkDelayMs: 5 } });
    expect(unversioned).toMatchObject({ displayName: "After", version: agent.version + 2, config: { modelOptions: { chunkDelayMs: 5 } } });
    await expect(client.getAgent(agent.id)).resolves.toEqual(unversioned);
  });

  it("pause makes it dormant (messages and wake refused 409 agent_dormant with resume guidance); resume accepts work again", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Sleepy" });
    const paused = await client.pauseAgent(agent.id);
    expect(paused.lifecycle).toBe("dormant");
    await expect(client.pauseAgent(agent.id)).resolves.toMatchObject({ lifecycle: "dormant" });
    const refused = await failure(client.sendMessage(agent.id, { text: "are you there?" }));
    expect(refused).toMatchObject({ status: 409, code: "agent_dormant" });
    expect(refused.detail).toContain("resume");
    expect(await failure(client.wakeAgent(agent.id))).toMatchObject({ status: 409, code: "agent_dormant" });
    expect((await client.listRuns(agent.id)).data).toEqual([]);

    await expect(client.resumeAgent(agent.id)).resolves.toMatchObject({ lifecycle: "active" });
    const { runKey } = await client.sendMessage(agent.id, { text: "back again" });
    await expect(client.waitForRun(agent.id, runKey)).resolves.toMatchObject({ status: "completed" });
  });

  it("an agent created with start=false refuses messages until resumed", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Later", start: false });
    expect(agent.lifecycle).toBe("created");
    expect(await failure(client.sendMessage(agent.id, { text: "hi" }))).toMatchObject({ status: 409, code: "agent_not_started" });
    await expect(client.resumeAgent(agent.id)).resolves.toMatchObject({ lifecycle: "active" });
  });

  it("wake goes through the queue and completes a manual run that the run log and state record", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Waker" });
    const { runKey } = await client.wakeAgent(agent.id);
    expect(runKey).toMatch(/^[0-9a-f]{64}$/);
    const run = await client.waitForRun(agent.id, runKey, { timeoutMs: 60_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${server.logs()}`);
    });
    expect(run).toMatchObject({ runKey, reason: "manual", status: "completed", threadId: `${agent.id}:run:${runKey}` });
    const state = await client.getAgentState(agent.id);
    expect(state.revision).toBe(1);
    expect(state.lastWakeAt).not.toBeNull();
    // One Idempotency-Key → one wake, whatever the retries.
    const first = await client.wakeAgent(agent.id, { idempotencyKey: "wake-once" });
    const retry = await client.wakeAgent(agent.id, { idempotencyKey: "wake-once" });
    expect(retry.runKey).toBe(first.runKey);
    await client.waitForRun(agent.id, first.runKey, { timeoutMs: 60_000 });
    expect((await client.listRuns(agent.id)).data.map((r) => r.runKey).sort()).toEqual([runKey, first.runKey].sort());
  });

  it("destroy is terminal: it stays destroyed, and messages are 410 agent_destroyed", async () => {
    const agent = await client.createAgent({ kind: "coach", displayName: "Doomed" });
    const { runKey } = await client.sendMessage(agent.id, { text: "last words" });
    await client.waitForRun(agent.id, runKey);
    const destroyed = await client.destroyAgent(agent.id);
    expect(destroyed.lifecycle).toBe("destroyed");
    await expect(client.getAgent(agent.id)).resolves.toMatchObject({ lifecycle: "destroyed" });
    expect(await failure(client.sendMessage(agent.id, { text: "hello?" }))).toMatchObject({ status: 410, code: "agent_destroyed" });
    expect(await failure(client.resumeAgent(agent.id))).toMatchObject({ status: 410, code: "agent_destroyed" });
    expect(await failure(client.pauseAgent(agent.id))).toMatchObject({ status: 410, code: "agent_destroyed" });
    expect(await failure(client.updateAgent(agent.id, { displayName: "Zombie" }))).toMatchObject({ status: 410, code: "agent_destroyed" });
    expect(await failure(client.wakeAgent(agent.id))).toMatchObject({ status: 410, code: "agent_destroyed" });
    expect(await failure(client.destroyAgent(agent.id))).toMatchObject({ status: 410, code: "agent_destroyed" });
    const listed = (await client.listAgents({ limit: 200 })).data.find((a) => a.id === agent.id);
    expect(listed?.lifecycle).toBe("destroyed");
    expect((await client.listRuns(agent.id)).data.map((r) => r.runKey)).toEqual([runKey]);
  });

  it("an unknown agent id is 404 not_found everywhere", async () => {
    const missing = "ag_doesnotexist000000";
    expect(await failure(client.getAgent(missing))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.updateAgent(missing, { displayName: "x" }))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.sendMessage(missing, { text: "x" }))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.listMessages(missing))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.listRuns(missing))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.pauseAgent(missing))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.wakeAgent(missing))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.getAgentState(missing))).toMatchObject({ status: 404, code: "not_found" });
  });
});
