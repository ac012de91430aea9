import { config } from "../../../config";

/**
 * The Agents SDK schedule callbacks of AgentDO: the SDK persists the name and later calls the
 * method of that name, so every one must stay a method of the final class.
 */
export type AgentCallback = "watchdog" | "sagaWatch" | "onTimerAlarm" | "onCompactionAlarm" | "onErasureDue" | "expireLineage" | "onRetentionDue" | "onSessionExpiry";

/** The slice of the Agents SDK scheduler the agent's parts use (the SDK multiplexes its rows onto the DO alarm). */
export interface AgentScheduler {
  schedule(when: Date | number, callback: AgentCallback, options?: { idempotent?: boolean }): Promise<unknown>;
  /** An interval schedule (idempotent: one row per callback and interval). */
  every(seconds: number, callback: AgentCallback): Promise<unknown>;
  listSchedules(): Promise<ReadonlyArray<{ id: string; callback: string; time: number }>>;
  cancelSchedule(id: string): Promise<boolean>;
}

/**
 * Arms the watchdog (idempotent: the SDK finds its row by callback): it resumes the drain, sagas and child reports
 * after a restart even if no request arrives. Every drain start that may leave work open arms it.
 */
export class Watchdog {
  constructor(private readonly scheduler: AgentScheduler) {}

  arm(): void {
    this.scheduler.schedule(config.run.watchdogSeconds, "watchdog", { idempotent: true }).catch(() => undefined);
  }
}

/**
 * The saga watch: an interval alarm kept while any tool call waits on a saga, so a saga that was
 * lost or errored after the one-shot watchdog fired is still found. An interval row, because a
 * one-shot schedule cannot re-arm itself from its own callback (the idempotent lookup finds the
 * row being run, which the SDK deletes right after).
 */
export async function armSagaWatch(scheduler: AgentScheduler): Promise<void> {
  // Awaited by the caller: the SDK inserts the row after an await of its own, so an unawaited arm could land
  // after a later disarm and leave the watch running with nothing to watch.
  await scheduler.every(config.run.sagaWatchSeconds, "sagaWatch").catch(() => undefined);
}

/** Drops the saga watch once no call waits on a saga any more. */
export async function disarmSagaWatch(scheduler: AgentScheduler): Promise<void> {
  for (const row of await scheduler.listSchedules()) if (row.callback === "sagaWatch") await scheduler.cancelSchedule(row.id);
}
