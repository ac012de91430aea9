import type { AgentScheduler } from "../lifecycle";
import { inBackground, logFailure } from "../../shared/background";
import type { Compaction, PumpOutcome } from "./compaction";

export interface CompactionDriverDeps {
  compaction: Compaction;
  scheduler: AgentScheduler;
  waitUntil(work: Promise<unknown>): void;
}

/** When compaction runs: after runs and activations on a macrotask, on its retry alarm, on a manual retry, or now (test seam). */
export class CompactionDriver {
  constructor(private readonly deps: CompactionDriverDeps) {}

  /** "Maybe compact": plans and works off compaction jobs on a macrotask, never on the reply path. */
  maybeCompact(threadId: string | null): void {
    const { compaction } = this.deps;
    inBackground(this.deps.waitUntil, () => {
      if (threadId !== null) compaction.plan(threadId);
      return compaction.pump();
    }, (error) => logFailure("compaction failed", error));
  }

  /** The compaction's `scheduleRetry`: a macrotask when already due, else the `onCompactionAlarm` schedule. */
  retryAt(atMs: number): void {
    if (atMs <= Date.now()) this.maybeCompact(null);
    else void this.armAlarm(atMs).catch(() => undefined);
  }

  private async armAlarm(atMs: number): Promise<void> {
    const { scheduler } = this.deps;
    const existing = (await scheduler.listSchedules()).filter((row) => row.callback === "onCompactionAlarm");
    if (existing.some((row) => row.time * 1000 <= atMs)) return;
    for (const row of existing) await scheduler.cancelSchedule(row.id);
    await scheduler.schedule(new Date(atMs), "onCompactionAlarm");
  }

  /** Requeues every failed_terminal job (seed 000: "retried manually") and works them off in the background. */
  retryFailed(): number {
    const requeued = this.deps.compaction.requeueFailed();
    if (requeued > 0) this.maybeCompact(null);
    return requeued;
  }

  /** Test seam: plans the thread (if given) and works off due jobs as if the clock read `nowMs`. */
  async runNow(threadId: string | null, nowMs?: number): Promise<PumpOutcome> {
    const { compaction } = this.deps;
    compaction.clock = nowMs === undefined ? null : () => nowMs;
    try {
      if (threadId !== null) compaction.plan(threadId);
      return await compaction.pump(10_000);
    } finally {
      compaction.clock = null;
    }
  }
}
