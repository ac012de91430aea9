import type { Env } from "../env";
import { agentStub, tenantStub } from "../objects/shared/stubs";
import { WakeJob } from "../schema/agents/wake";
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
    const outcome = await agentStub(env, job.tenantId, job.agentId).deliverWake(job);
    logEvent("info", "wake delivered", { tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, outcome: outcome.ok ? outcome.status : outcome.code });
    message.ack();
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "wake delivery failed", tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, error: String(error) }));
    message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
  }
}

/**
 * WAKE_QUEUE's dead-letter queue: wakes whose delivery failed `max_retries` times. Each is settled
 * visibly — its run is recorded as `failed_terminal` (`wake_dead_lettered`) on the agent, and the
 * tenant's audit log says so (`wake.dead_lettered`) — instead of vanishing. Idempotent: a redelivered
 * dead letter finds the run already recorded. A missing agent is audited and acknowledged; a DO that
 * cannot be reached is retried (the DLQ itself has no further queue).
 */
export async function consumeDeadWakes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const parsed = WakeJob.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "malformed dead wake dropped", issues: parsed.error.issues.length }));
      message.ack();
      continue;
    }
    const job = parsed.data;
    try {
      const outcome = await agentStub(env, job.tenantId, job.agentId).settleDeadWake(job);
      const detail = { runKey: job.runKey, reason: job.reason, threadId: job.threadId, attempts: message.attempts, ...(outcome.ok ? { settled: outcome.settled, runStatus: outcome.runStatus } : { settled: false, code: outcome.code }) };
      if (!outcome.ok || outcome.settled) await tenantStub(env, job.tenantId).audit("system:wake-dlq", "wake.dead_lettered", `agent:${job.agentId}`, detail);
      logEvent("warn", "dead wake settled", { tenantId: job.tenantId, agentId: job.agentId, ...detail });
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "dead wake not settled", tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, error: String(error) }));
      message.retry({ delaySeconds: Math.min(300, 2 ** message.attempts) });
    }
  }
}
