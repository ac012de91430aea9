import { config } from "../../config";

/**
 * The Agents SDK schedule callbacks of AgentDO: the SDK persists the name and later calls the
 * method of that name, so every one must stay a method of the final class.
 */
export type AgentCallback = "watchdog" | "onTimerAlarm" | "onCompactionAlarm" | "onErasureDue" | "expireLineage" | "onSessionExpiry";

/** The slice of the Agents SDK scheduler the agent's parts use (the SDK multiplexes its rows onto the DO alarm). */
export interface AgentScheduler {
  schedule(when: Date | number, callback: AgentCallback, options?: { idempotent?: boolean }): Promise<unknown>;
  listSchedules(): Promise<ReadonlyArray<{ id: string; callback: string; time: number }>>;
  cancelSchedule(id: string): Promise<boolean>;
}

/** Arms the watchdog (idempotent): it resumes the drain, sagas and child reports after a restart even if no request arrives. */
export function armWatchdog(scheduler: AgentScheduler): void {
  void scheduler.schedule(config.run.watchdogSeconds, "watchdog", { idempotent: true }).catch(() => undefined);
}
