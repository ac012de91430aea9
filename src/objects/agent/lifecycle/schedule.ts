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
 * Arms the watchdog (idempotent): it resumes the drain, sagas and child reports after a restart even if no request
 * arrives. Every drain start arms it, and the SDK's idempotent arm costs ~5 statements (list its jobs, re-arm the
 * alarm), so the time of the row it armed or found is remembered (issue 12 §8): until then that row is known to be
 * there and an arm asks nothing. Exact: the row goes only when it fires (at its time, after which the SDK is asked
 * again) or when the whole storage is erased (`forget`); nothing else cancels a watchdog.
 */
export class Watchdog {
  /** Epoch ms until which a watchdog row is known armed (0: not known). */
  private armedUntilMs = 0;

  constructor(
    private readonly scheduler: AgentScheduler,
    private readonly now: () => number = Date.now,
  ) {}

  arm(): void {
    if (this.now() < this.armedUntilMs) return;
    this.scheduler
      .schedule(config.run.watchdogSeconds, "watchdog", { idempotent: true })
      .then((schedule) => {
        // The SDK's schedule carries its row's time in whole seconds (rounded down: the knowledge ends no later than the row).
        const time = (schedule as { time?: unknown } | null)?.time;
        if (typeof time === "number" && Number.isFinite(time)) this.armedUntilMs = time * 1000;
      })
      .catch(() => undefined);
  }

  /** The storage was erased (the row with it): the next arm asks the SDK. */
  forget(): void {
    this.armedUntilMs = 0;
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
