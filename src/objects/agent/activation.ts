import { sql } from "drizzle-orm";
import * as schema from "../../db/agent-schema";
import type { Hook } from "../shared/hooks";
import { logFailure } from "../shared/background";
import type { AgentRetention, EventForwarder } from "./events";
import type { Compaction, CompactionDriver } from "./compaction";
import type { Sagas } from "./tools";
import type { Timers } from "./timers";
import type { Drainer, WakeInbox } from "./wakes";
import type { AgentDb } from "./types";
import { handWritten } from "../shared/sqlite";

/**
 * Work an activation resumes: runs in the inbox (`pendingCount() > 0`), sagas to settle (`inFlight()` or
 * `parkedRunKeys()`), timers to plan (the catch-up's candidates: active, with a `nextRunAt`) and compaction jobs to
 * recover (what `CompactionJobs.recover` reads: a `running` or `pending` job).
 */
export interface ActivationWork {
  pending: boolean;
  sagas: boolean;
  timers: boolean;
  compaction: boolean;
}

/**
 * The same conditions as `WakeInbox.pendingCount`, `ActionStore.inFlight` + `WakeInbox.parkedRunKeys`, the timers'
 * due candidates and the compaction recovery's read, as one read (sessions 11 and 12): on a freshly opened database
 * every distinct statement is prepared once, so a cold wake of an agent with nothing to recover pays one.
 */
const ACTIVATION_WORK = handWritten<{ pending: number; sagas: number; timers: number; compaction: number }>((v) => sql`SELECT EXISTS (SELECT 1 FROM ${schema.wakeInbox}) AS pending,
          (EXISTS (SELECT 1 FROM ${schema.actions} WHERE ${schema.actions.status} IN ('executing', 'awaiting_approval'))
            OR EXISTS (SELECT 1 FROM ${schema.runs} WHERE ${schema.runs.status} = 'waiting')) AS sagas,
          EXISTS (SELECT 1 FROM ${schema.timers} WHERE ${schema.timers.status} = 'active' AND ${schema.timers.nextRunAt} IS NOT NULL) AS timers,
          EXISTS (SELECT 1 FROM ${schema.compactionJobs} WHERE ${schema.compactionJobs.status} IN ('running', 'pending')) AS compaction`);

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
  private answer: ActivationWork | null = null;

  constructor(private readonly deps: AgentActivationDeps) {}

  hooks(): Hook[] {
    const { timers, forwarder, retention, waitUntil } = this.deps;
    return [
      { name: "resume pending runs", run: () => this.resumePendingRuns(this.work().pending) },
      // Sagas a crash may have cut off (lost, errored, or reported while nobody listened) are settled on every activation.
      { name: "recover sagas", run: () => this.recoverSagasInBackground(this.work().sagas) },
      // Timer slots missed while the object slept are caught up on activation (with no candidate, nothing is read).
      { name: "catch up timers", run: () => timers.catchUp(this.work().timers) },
      // Events a flush did not get to before the object stopped reach the tenant stream now.
      { name: "forward unsent events", run: () => forwarder.schedule() },
      // Compaction interrupted by a restart counts as a failed attempt and resumes off the request path.
      { name: "recover compaction", run: () => this.recoverCompaction(this.work(true).compaction) },
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
   * The hooks' questions in one read (sessions 11, 12), asked by the first hook and kept for the others until the last
   * one asking (`last`: dropped then). The hooks run back to back inside the migrations' `blockConcurrencyWhile`, with
   * no I/O between them: the drain the first may start runs on a macrotask, the saga recovery and the timer catch-up
   * write nothing the later questions ask about before their first await, so the answer still holds for each.
   */
  work(last = false): ActivationWork {
    const row = this.answer ?? decode(ACTIVATION_WORK(this.deps.db).get()!);
    this.answer = last ? null : row;
    return row;
  }

  private recoverSagasInBackground(due: boolean): void {
    if (due) this.deps.waitUntil(this.deps.sagas.recover("activation").catch((error: unknown) => logFailure("saga recovery failed", error)));
  }

  private recoverCompaction(open: boolean): void {
    // No open job: the recovery would read none and write nothing, and the pump would do nothing. A job inserted later
    // comes from a plan whose caller pumps (after a run, the compaction alarm, a manual retry, the test seam).
    if (open && this.deps.compaction.recover()) this.deps.compactor.maybeCompact(null);
  }
}

const decode = (row: { pending: number; sagas: number; timers: number; compaction: number }): ActivationWork => ({
  pending: row.pending === 1,
  sagas: row.sagas === 1,
  timers: row.timers === 1,
  compaction: row.compaction === 1,
});
