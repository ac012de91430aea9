import type { AgentScheduler } from "./lifecycle";

type Listing = Awaited<ReturnType<AgentScheduler["listSchedules"]>>;

/**
 * The agent's scheduler with one listing of the SDK's schedules shared by the activation's hooks (issue 12 §7,
 * session 11): the timer catch-up and the retention arm each listed every row on a cold start (one `cf_agents_jobs`
 * read each, on a freshly opened file). While the activation runs (its hooks, inside the migrations'
 * `blockConcurrencyWhile`, so no alarm or request runs in between) a listing asked for is kept and answers the next
 * one; any schedule write through this scheduler drops it, and once the hooks are done every call lists afresh.
 *
 * Exact: a kept listing is handed out only while nothing can have changed the rows since it was asked for. The SDK's
 * own alarm handling cannot run inside `blockConcurrencyWhile`, every write of ours goes through here (all of the
 * agent's parts get this scheduler, not the SDK's), and a listing asked for while a write is under way is not kept.
 */
export class ActivationSchedules implements AgentScheduler {
  private activating = true;
  private kept: Promise<Listing> | null = null;
  /** Writes under way: a listing asked for meanwhile may or may not see them, so it is not kept. */
  private writes = 0;

  constructor(private readonly sdk: AgentScheduler) {}

  /** The activation's hooks are done: from now on every listing is read afresh. */
  activated(): void {
    this.activating = false;
    this.kept = null;
  }

  listSchedules(): Promise<Listing> {
    if (!this.activating || this.writes > 0) return this.sdk.listSchedules();
    // A failed listing is not kept: the next caller asks again.
    this.kept ??= this.sdk.listSchedules().catch((error: unknown) => {
      this.kept = null;
      throw error;
    });
    return this.kept;
  }

  schedule(...args: Parameters<AgentScheduler["schedule"]>): Promise<unknown> {
    return this.write(() => this.sdk.schedule(...args));
  }

  every(...args: Parameters<AgentScheduler["every"]>): Promise<unknown> {
    return this.write(() => this.sdk.every(...args));
  }

  cancelSchedule(id: string): Promise<boolean> {
    return this.write(() => this.sdk.cancelSchedule(id));
  }

  /** A write drops the kept listing when it starts and when it ends. */
  private write<T>(work: () => Promise<T>): Promise<T> {
    this.kept = null;
    this.writes++;
    return work().finally(() => {
      this.writes--;
      this.kept = null;
    });
  }
}
