/**
 * Double texting: what happens to a user message that arrives while a run of the same session is
 * still in flight (queued, running, parked on a saga, or about to resume).
 *
 * - `enqueue` (default): it waits its turn and gets its own run.
 * - `reject`: refused with 409 `run_in_progress`; nothing is recorded.
 * - `interrupt`: every in-flight run of the session stops at its next step boundary as `interrupted`; the new
 *   message runs once they have settled, with their messages in context.
 * - `merge`: it is folded into the session's next run (each message keeps its runKey).
 */
export const DOUBLE_TEXTING_POLICIES = ["enqueue", "reject", "interrupt", "merge"] as const;
export type DoubleTextingPolicy = (typeof DOUBLE_TEXTING_POLICIES)[number];

export type TurnAdmission =
  | { kind: "run" }
  | { kind: "reject"; inFlight: string[] }
  | { kind: "queue"; policy: "enqueue" | "merge"; inFlight: string[] }
  | { kind: "interrupt"; inFlight: string[] };

/** The message's own policy wins over the agent's; with nothing in flight every policy just runs the message. */
export function admitTurn(agentPolicy: DoubleTextingPolicy, messagePolicy: DoubleTextingPolicy | undefined, inFlight: ReadonlyArray<string>): TurnAdmission {
  const policy = messagePolicy ?? agentPolicy;
  if (inFlight.length === 0) return { kind: "run" };
  const runs = [...inFlight];
  if (policy === "reject") return { kind: "reject", inFlight: runs };
  if (policy === "interrupt") return { kind: "interrupt", inFlight: runs };
  return { kind: "queue", policy, inFlight: runs };
}

/**
 * The user turns that join `primary`'s run under `merge`: the pending turns of the same thread right after it that
 * were admitted as merges, in order, up to `limit`. A turn of that thread admitted otherwise ends the fold, so no
 * message is answered ahead of one sent before it.
 */
export function selectMergedTurns<T extends { runKey: string; reason: string; threadId: string; merge: boolean }>(primary: T, pendingOldestFirst: ReadonlyArray<T>, limit: number): T[] {
  if (primary.reason !== "userInitiated") return [];
  const merged: T[] = [];
  for (const wake of pendingOldestFirst) {
    if (wake.runKey === primary.runKey || wake.threadId !== primary.threadId || wake.reason !== "userInitiated") continue;
    if (!wake.merge || merged.length >= limit) break;
    merged.push(wake);
  }
  return merged;
}
