import type { Env } from "../env";
import { agentStub } from "../http/auth";
import { WakeJob } from "../schema/wake";
import { logEvent } from "../log";

/**
 * Delivers wake jobs to their agent. Delivery is at-least-once; the agent's runKey dedupe makes a
 * redelivered job harmless. Malformed jobs are acknowledged (retrying cannot fix them) and logged;
 * a transient failure is retried and, past max_retries, lands in the dead-letter queue.
 *
 * A batch is delivered concurrently, grouped by agent (issue 12 §7): different agents' wakes travel at once
 * (a batch holds at most `max_batch_size` messages, so that bounds the fan-out), one agent's wakes go one after
 * the other in batch order.
 */
export async function consumeWakes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byAgent = new Map<string, Array<{ message: Message<unknown>; job: WakeJob }>>();
  for (const message of batch.messages) {
    const parsed = WakeJob.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "malformed wake job dropped", issues: parsed.error.issues.length }));
      message.ack();
      continue;
    }
    const agent = `${parsed.data.tenantId}:${parsed.data.agentId}`;
    const group = byAgent.get(agent) ?? [];
    group.push({ message, job: parsed.data });
    byAgent.set(agent, group);
  }
  await Promise.all(
    [...byAgent.values()].map(async (group) => {
      for (const { message, job } of group) await deliver(env, message, job);
    }),
  );
}

async function deliver(env: Env, message: Message<unknown>, job: WakeJob): Promise<void> {
  try {
    const outcome = await agentStub(env, job.tenantId, job.agentId).enqueueWake(job);
    logEvent("info", "wake delivered", { tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, outcome: outcome.ok ? outcome.status : outcome.code });
    message.ack();
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "wake delivery failed", tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, error: String(error) }));
    message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
  }
}
