import type { WakeReason } from "../ids/run-keys";

/**
 * Autonomous wakes that queue behind a run merge into the next one: the agent reacts once to
 * everything that happened meanwhile, and every merged wake keeps its own runKey and terminal row.
 * Conversation turns and explicit manual wakes never merge: each is something a person asked for.
 */
const COALESCIBLE: ReadonlySet<WakeReason> = new Set<WakeReason>(["subscription", "timer", "recoveryCatchup", "webhook", "toolResult", "child"]);

export const isCoalescible = (reason: WakeReason): boolean => COALESCIBLE.has(reason);

/** The pending wakes (oldest first) that join `primary`'s run, at most `limit`. */
export function selectCompanions<T extends { runKey: string; reason: WakeReason }>(primary: T, pendingOldestFirst: ReadonlyArray<T>, limit: number): T[] {
  if (!isCoalescible(primary.reason)) return [];
  return pendingOldestFirst.filter((wake) => wake.runKey !== primary.runKey && isCoalescible(wake.reason)).slice(0, limit);
}
