/** The AgentDO method the Agents SDK calls when the timers' schedule comes due. */
export const TIMER_ALARM_CALLBACK = "onTimerAlarm";

/** After a tick that failed on some timer, the next attempt waits this long instead of looping. */
export const TIMER_RETRY_DELAY_MS = 60_000;

/**
 * The slice of the Agents SDK scheduler the timers use. The SDK owns the DO alarm and multiplexes
 * every schedule row onto it, so the timers keep exactly one row of their own.
 */
export interface AlarmScheduler {
  listSchedules(): Promise<ReadonlyArray<{ id: string; callback: string; time: number }>>;
  cancelSchedule(id: string): Promise<boolean>;
  schedule(when: Date, callback: typeof TIMER_ALARM_CALLBACK): Promise<unknown>;
}

/**
 * Keeps one SDK schedule (`onTimerAlarm`) at the earliest due timer. Re-arms are serialized, and
 * each reads the earliest time when it runs, so concurrent callers cannot leave two rows behind.
 */
export class TimerAlarm {
  private pending: Promise<void> = Promise.resolve();
  /** Re-arms queued or under way. */
  private inFlight = 0;

  constructor(private readonly scheduler: AlarmScheduler) {}

  /**
   * Replaces the schedule with one at `earliest()` (epoch ms) but no sooner than `minDelayMs` from
   * now, or removes it when `earliest()` is null.
   */
  arm(earliest: () => number | null, minDelayMs = 0): Promise<void> {
    this.inFlight++;
    const run = this.pending.then(() => this.apply(earliest(), minDelayMs));
    this.pending = run.catch(() => undefined).finally(() => this.inFlight--);
    return run;
  }

  /**
   * No re-arm is queued or under way: one armed now asks `earliest()` a microtask later, with no I/O in between, so a
   * value the caller just read still holds then (`Timers.runDue`).
   */
  idle(): boolean {
    return this.inFlight === 0;
  }

  private async rows() {
    return (await this.scheduler.listSchedules()).filter((row) => row.callback === TIMER_ALARM_CALLBACK);
  }

  private async apply(earliestMs: number | null, minDelayMs: number): Promise<void> {
    const now = Date.now();
    // Rounded up: the SDK stores whole seconds, and an alarm before the slot would find nothing due.
    const target = earliestMs === null ? null : Math.ceil(Math.max(earliestMs, now + minDelayMs) / 1000);
    let kept = false;
    for (const row of await this.rows()) {
      // A row already due is the one the SDK is running now; it deletes that row afterwards, so never keep it.
      if (!kept && row.time === target && row.time * 1000 > now) {
        kept = true;
        continue;
      }
      await this.scheduler.cancelSchedule(row.id);
    }
    if (target !== null && !kept) await this.scheduler.schedule(new Date(target * 1000), TIMER_ALARM_CALLBACK);
  }
}
