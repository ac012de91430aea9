import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../src/objects/agent/agent-do";
import { createAgent, createTenant, eventually, freshInstance } from "./helpers";

const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));

type JobState = { id: string; status: string; attempt_count: number; next_attempt_at: number };

/**
 * An agent whose thread overflows, with its one compaction job planned but not worked, set to `status` (`running`:
 * cut off by a crash or eviction mid-attempt), or no job at all (`null`).
 */
async function agentWithJob(status: "running" | "pending" | null) {
  const { tenantId, key } = await createTenant();
  const agent = await createAgent(key, { kind: "coach", model: "builtin:echo" });
  const stub = agentDo(tenantId, agent.id);
  const job = await runInDurableObject(stub, (instance: AgentDO) => {
    const thread = "t-long";
    for (let i = 0; i < 120; i++) instance.parts.history.append({ id: `${thread}-${i}`, threadId: thread, kind: i % 2 ? "assistant" : "user", text: `message ${i} about the plan` });
    if (status === null) return null;
    expect(instance.parts.compaction.plan(thread)).toBe(1);
    const storage = (instance as unknown as { ctx: DurableObjectState }).ctx.storage;
    if (status === "running") storage.sql.exec("UPDATE compaction_jobs SET status = 'running', attempt_count = 1");
    return storage.sql.exec<JobState>("SELECT id, status, attempt_count, next_attempt_at FROM compaction_jobs").one();
  });
  return { stub, job };
}

/** A fresh instance on the same storage: the next activation after an eviction (its onStart hooks run). */
async function reactivate(stub: ReturnType<typeof agentDo>, until: (storage: DurableObjectStorage) => boolean): Promise<void> {
  await runInDurableObject(stub, async (instance, state) => {
    freshInstance(instance, state);
    await eventually(async () => until(state.storage));
  });
}

const jobs = (storage: DurableObjectStorage) => storage.sql.exec<JobState>("SELECT id, status, attempt_count, next_attempt_at FROM compaction_jobs").toArray();
const compactionAlarms = (storage: DurableObjectStorage) => storage.sql.exec("SELECT id FROM cf_agents_jobs WHERE fn = 'onCompactionAlarm'").toArray().length;

describe("compaction on activation (one read decides recovery and the pump)", () => {
  it("a job cut off while running counts a failed attempt and its retry is armed", async () => {
    const { stub, job } = await agentWithJob("running");
    await reactivate(stub, (storage) => {
      const [row] = jobs(storage);
      return row?.status === "pending" && row.next_attempt_at > job!.next_attempt_at && compactionAlarms(storage) === 1;
    });
  });

  it("a pending job due now is worked off by the activation's pump", async () => {
    const { stub } = await agentWithJob("pending");
    await reactivate(stub, (storage) => jobs(storage)[0]?.status === "done");
  });

  it("with no open job the activation reads once and leaves nothing behind", async () => {
    const { stub } = await agentWithJob(null);
    await reactivate(stub, (storage) => jobs(storage).length === 0 && compactionAlarms(storage) === 0);
  });
});
