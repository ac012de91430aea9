import { H } from "./hash";

/** Wake reasons. */
export const WAKE_REASONS = [
  "subscription",
  "timer",
  "userInitiated",
  "recoveryCatchup",
  "manual",
  "webhook",
  "toolResult",
  "child",
] as const;
export type WakeReason = (typeof WAKE_REASONS)[number];

/**
 * Deterministic runKeys (seed 000 "Wake-run idempotency"). The same trigger
 * always yields the same key, so every duplicate delivery dedupes in the wake-run log.
 */
export const runKeys = {
  subscription: (agentId: string, subscriptionId: string, logicalChangeKey: string) =>
    H(agentId, subscriptionId, logicalChangeKey),
  timer: (agentId: string, timerId: string, scheduledAt: string) => H(agentId, timerId, scheduledAt),
  userInitiated: (agentId: string, sessionId: string, turnId: string) => H(agentId, sessionId, turnId),
  webhook: (agentId: string, triggerId: string, deliveryId: string) => H(agentId, triggerId, deliveryId),
  /** Manual wakes are keyed by the caller's request id (its Idempotency-Key when given). */
  manual: (agentId: string, requestId: string) => H(agentId, "manual", requestId),
  /**
   * One catch-up per timer per recovered slot: keyed by the last missed scheduledAt, which the
   * same recovery always computes, so a repeated recovery of the same gap dedupes.
   */
  recoveryCatchup: (agentId: string, timerId: string, lastMissedScheduledAt: string) =>
    H(agentId, timerId, "recoveryCatchup", lastMissedScheduledAt),
  toolResult: (agentId: string, operationId: string) => H(agentId, "toolResult", operationId),
  child: (agentId: string, childAgentId: string, childRunKey: string) => H(agentId, "child", childAgentId, childRunKey),
} as const;

/** Which thread a wake's run reads and writes. */
export const threadIds = {
  autonomous: (agentId: string, runKey: string) => `${agentId}:run:${runKey}`,
  interactive: (agentId: string, sessionId: string) => `${agentId}:session:${sessionId}`,
} as const;
