import type { Env } from "../env";
import { agentStub } from "../objects/shared/stubs";
import { WakeJob } from "../schema/wake";
import { logEvent } from "../log";

/**
 * Delivers wake jobs to their agent. Delivery is at-least-once; the agent's runKey dedupe makes a
 * redelivered job harmless. Malformed jobs are acknowledged (retrying cannot fix them) and logged;
 * a transient failure is retried and, past max_retries, lands in the dead-letter queue.
 */
export async function consumeWakes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const parsed = WakeJob.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ level: "error", msg: "malformed wake job dropped", issues: parsed.error.issues.length }));
      message.ack();
      continue;
    }
    const job = parsed.data;
    try {
      const outcome = await agentStub(env, job.tenantId, job.agentId).enqueueWake(job);
      logEvent("info", "wake delivered", { tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, outcome: outcome.ok ? outcome.status : outcome.code });
      message.ack();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "wake delivery failed", tenantId: job.tenantId, agentId: job.agentId, runKey: job.runKey, error: String(error) }));
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}
