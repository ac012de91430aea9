import { sql } from "drizzle-orm";
import * as schema from "../../db/agent-schema";
import type { Hook } from "../shared/hooks";
import { logFailure } from "../shared/background";
import { rawSite } from "../shared/statements/statement-sites";
import type { AgentRetention, EventForwarder } from "./events";
import type { Compaction, CompactionDriver } from "./compaction";
import type { Sagas } from "./tools";
import type { Timers } from "./timers";
import type { Drainer, WakeInbox } from "./wakes";
import type { AgentDb } from "./types";

/** Work an activation resumes: runs in the inbox (`pendingCount() > 0`), sagas to settle (`inFlight()` or `parkedRunKeys()`). */
export interface ActivationWork {
  pending: boolean;
  sagas: boolean;
}

/** The same conditions as `WakeInbox.pendingCount`, `ActionStore.inFlight` and `WakeInbox.parkedRunKeys`, as one read. */
const ACTIVATION_WORK = rawSite<{ pending: number; sagas: number }>(
  "agent.activationWork",
  () =>
    sql`SELECT EXISTS (SELECT 1 FROM ${schema.wakeInbox}) AS pending,
          (EXISTS (SELECT 1 FROM ${schema.actions} WHERE ${schema.actions.status} IN ('executing', 'awaiting_approval'))
            OR EXISTS (SELECT 1 FROM ${schema.runs} WHERE ${schema.runs.status} = 'waiting')) AS sagas`,
);

export interface AgentActivationDeps {
  db: AgentDb;
  inbox: WakeInbox;
  drain: Drainer;
  sagas: Sagas;
  timers: Timers;
  forwarder: EventForwarder;
  compaction: Compaction;
  compactor: CompactionDriver;
  retention: AgentRetention;
  waitUntil(work: Promise<unknown>): void;
}

/**
 * What an activation resumes (after migrations, before the first request): work a restart or eviction interrupted.
 * Its hooks run in order inside the migrations' `blockConcurrencyWhile` (wiring.ts), and the watchdog reuses
 * `resumePendingRuns`.
 */
export class AgentActivation {
  private answer: { pending: number; sagas: number } | null = null;

  constructor(private readonly deps: AgentActivationDeps) {}

  hooks(): Hook[] {
    const { timers, forwarder, retention, waitUntil } = this.deps;
    return [
      { name: "resume pending runs", run: () => this.resumePendingRuns(this.work(false).pending) },
      // Sagas a crash may have cut off (lost, errored, or reported while nobody listened) are settled on every activation.
      { name: "recover sagas", run: () => this.recoverSagasInBackground(this.work(true).sagas) },
      // Timer slots missed while the object slept are caught up on activation.
      { name: "catch up timers", run: () => timers.catchUp() },
      // Events a flush did not get to before the object stopped reach the tenant stream now.
      { name: "forward unsent events", run: () => forwarder.schedule() },
      // Compaction interrupted by a restart counts as a failed attempt and resumes off the request path.
      { name: "recover compaction", run: () => this.recoverCompaction() },
      // The event log's retention pass (on an SDK schedule, armed once it is missing). Its check asks now, so the
      // activation's one schedule listing (shared with the timer catch-up) answers it; a missing row is scheduled off
      // the activation path.
      { name: "arm retention", run: () => waitUntil(retention.armOnActivation((arm) => new Promise((resolve) => setTimeout(resolve, 0)).then(arm)).catch(() => undefined)) },
    ];
  }

  resumePendingRuns(pending = this.deps.inbox.pendingCount() > 0): void {
    if (pending) this.deps.drain.start();
  }

  /**
   * The first two hooks' questions in one read (session 11), asked by the first and kept for the second (`last`:
   * dropped then). The drain the first may start runs on a macrotask, so nothing writes the inbox, actions or runs
   * between the two hooks.
   */
  work(last: boolean): ActivationWork {
    const row = this.answer ?? ACTIVATION_WORK.bind(this.deps.db).get()!;
    this.answer = last ? null : row;
    return { pending: row.pending === 1, sagas: row.sagas === 1 };
  }

  private recoverSagasInBackground(due: boolean): void {
    if (due) this.deps.waitUntil(this.deps.sagas.recover().catch((error: unknown) => logFailure("saga recovery failed", error)));
  }

  private recoverCompaction(): void {
    // No open job: the pump would read none and do nothing. A job inserted later comes from a plan whose caller pumps
    // (after a run, the compaction alarm, a manual retry, the test seam), so skipping it changes no recovery (session 11).
    if (this.deps.compaction.recover()) this.deps.compactor.maybeCompact(null);
  }
}
