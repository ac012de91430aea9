import type { Env } from "../env";
import { agentStub, tenantStub } from "../objects/shared/stubs";
import { WakeJob } from "../schema/agents/wake";
import { logEvent } from "../log";

/**
 * Delivers wake jobs to their agent. Delivery is at-least-once; the agent's runKey dedupe makes a
 * redelivered job harmless. Malformed jobs are acknowledged (retrying cannot fix them) and logged;
 * a transient failure is retried and, past max_retries, lands in the dead-letter queue.
 *
 * A batch is delivered concurrently, grouped by agent: different agents' wakes travel at once
 * (a batch holds at most `max_batch_size` messages, so that bounds the fan-out), one agent's wakes go one after
 * the other in batch order.
 *
 * One info line per batch with its counts: a line per wake cost ~0.2 ms of a fan-out's
 * one thread each (console output is serialized for the log stream), and the run itself is on record in the agent
 * and on the tenant's event stream. A failed delivery still logs its own error line.
 */
export async function consumeWakes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byAgent = new Map<string, Array<{ message: Message<unknown>; job: WakeJob }>>();
  const tally: DeliveryTally = { accepted: 0, duplicate: 0, refused: 0, retried: 0, malformed: 0 };
  for (const message of batch.messages) {
    const parsed = WakeJob.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "malformed wake job dropped", issues: parsed.error.issues.length }));
      message.ack();
      tally.malformed++;
      continue;
    }
    const agent = `${parsed.data.tenantId}:${parsed.data.agentId}`;
    const group = byAgent.get(agent) ?? [];
    group.push({ message, job: parsed.data });
    byAgent.set(agent, group);
  }
  await Promise.all(
    [...byAgent.values()].map(async (group) => {
      for (const { message, job } of group) tally[await deliver(env, message, job)]++;
    }),
  );
  logEvent("info", "wake batch delivered", { queue: batch.queue, messages: batch.messages.length, ...tally });
}

/** How a delivered message ended: accepted (a new run), duplicate (a known runKey), refused (the agent said no), retried. */
type Delivery = "accepted" | "duplicate" | "refused" | "retried";
/** A batch's messages by how they ended (malformed: dropped before delivery). */
type DeliveryTally = Record<Delivery | "malformed", number>;

async function deliver(env: Env, message: Message<unknown>, job: WakeJob): Promise<Delivery> {
  try {
    const outcome = await agentStub(env, job.tenantId, job.agentId).deliverWake(job);
    message.ack();
    if (!outcome.ok) logEvent("info", "wake refused", { tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, code: outcome.code });
    return !outcome.ok ? "refused" : outcome.status === "accepted" ? "accepted" : "duplicate";
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "wake delivery failed", tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, error: String(error) }));
    message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    return "retried";
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
