import { and, desc, eq, lt } from "drizzle-orm";
import { config } from "../../../config";
import { capFloorSeq, cutoffIso, type RetentionPolicy } from "../../../core/memory/retention";
import * as schema from "../../../db/agent-schema";
import { counterStatements } from "../../shared/counters";
import { pruneLogPrefix, pruneWhere, readMark } from "../../shared/pruning";
import { recallIndex } from "../rows";
import type { AgentScheduler } from "../lifecycle";
import type { AgentDb } from "../types";

/** Counters key: every agent event seq up to this one has been pruned (`cursor_expired` below it). */
export const AGENT_EVENTS_MARK = "retention:events-through";
/** Counters key: every scheduler decision seq up to this one has been pruned. */
const SCHEDULER_DECISIONS_MARK = "retention:scheduler-decisions-through";
const CALLBACK = "onRetentionDue";
/** Counters key: the time of the pass this agent last scheduled (or found scheduled), in ms. */
const ARMED_KEY = "retention:armed-for";

export interface AgentRetentionDeps {
  db: AgentDb;
  scheduler: AgentScheduler;
  /** The tenant's bounds (its policy may override the defaults); one call per pass. */
  policy(): Promise<RetentionPolicy>;
  exists(): boolean;
}

export interface AgentPruneOutcome {
  deleted: { events: number; compactionJobs: number; schedulerDecisions: number };
  more: boolean;
}

/**
 * The agent's bounded tables: its event log and its scheduler decisions (one row per timer tick) by age and row cap,
 * and finished compaction jobs.
 * Messages, summaries, runs and traces, and reports are history and stay. Runs on an SDK schedule, one bounded
 * batch per table per pass.
 */
export class AgentRetention {
  constructor(private readonly deps: AgentRetentionDeps) {}

  /** Arms the next pass unless one is already scheduled. */
  async arm(atMs: number = nextPassAt()): Promise<void> {
    if (await this.missing()) await this.schedule(atMs);
  }

  /**
   * On activation: whether a pass is scheduled, and only when none is, schedules one through `later` (off the
   * activation path). Nothing else schedules a pass while none exists (a pass schedules the next one only when it
   * runs), so the answer still holds when `later` runs.
   *
   * Session 15: answered from the time of the pass this agent last scheduled (one counters read) while that pass is
   * not overdue by a whole interval; only then is the SDK's schedule listed (before, on every activation: a listing
   * on a freshly opened file, on a fan-out's path). A pass that runs schedules the next and moves the time on, so a
   * schedule lost in between is found at most an interval after its pass was due.
   */
  async armOnActivation(later: (arm: () => Promise<void>) => Promise<void>): Promise<void> {
    const armedFor = counterStatements(this.deps.db).read.get({ key: ARMED_KEY })?.state.at;
    if (typeof armedFor === "number" && armedFor + config.retention.intervalSeconds * 1_000 > Date.now()) return;
    if (!this.deps.exists()) return;
    const scheduled = await this.scheduledPass();
    if (scheduled) return this.noteArmed(scheduled.time * 1_000);
    await later(() => this.schedule(nextPassAt()));
  }

  private async missing(): Promise<boolean> {
    return this.deps.exists() && !(await this.scheduledPass());
  }

  /** The SDK's row of the scheduled pass, if any (a listing of every schedule). */
  private async scheduledPass(): Promise<{ time: number } | undefined> {
    return (await this.deps.scheduler.listSchedules()).find((row) => row.callback === CALLBACK);
  }

  private async schedule(atMs: number): Promise<void> {
    await this.deps.scheduler.schedule(new Date(atMs), CALLBACK);
    this.noteArmed(atMs);
  }

  private noteArmed(atMs: number): void {
    counterStatements(this.deps.db).write.run({ key: ARMED_KEY, state: { at: atMs } });
  }

  /** The `onRetentionDue` callback: one pass, then the next one (soon while a batch was full). */
  async run(nowMs: number = Date.now()): Promise<AgentPruneOutcome> {
    const outcome = this.prune(await this.currentPolicy(), nowMs);
    await this.arm(outcome.more ? Date.now() + 1_000 : nextPassAt());
    return outcome;
  }

  /** The tenant's bounds, or the defaults while the tenant cannot be reached. */
  currentPolicy(): Promise<RetentionPolicy> {
    return this.deps.policy().catch(() => config.retention);
  }

  prune(policy: RetentionPolicy, nowMs: number): AgentPruneOutcome {
    const { db } = this.deps;
    const batch = config.retention.batchRows;
    const head = db.select({ seq: schema.events.lastSeq }).from(schema.events).orderBy(desc(schema.events.seq)).limit(1).get()?.seq ?? 0;
    const events = pruneLogPrefix(
      db,
      { table: "events", seq: "seq", last: "last_seq", createdAt: "created_at", mark: AGENT_EVENTS_MARK },
      cutoffIso(nowMs, policy.agentEvents.maxAgeDays),
      capFloorSeq(head, policy.agentEvents.maxRows),
      batch,
    );
    // Only `done` jobs: a failed_terminal job stays until it is retried by hand (pruning it would re-admit its span on its own).
    const doneBefore = nowMs - policy.compactionJobsDays * 86_400_000;
    const jobs = pruneWhere(db, "compaction_jobs", and(eq(schema.compactionJobs.status, "done"), lt(schema.compactionJobs.updatedAt, doneBefore))!, batch);
    const decisionsBound = config.retention.schedulerDecisions;
    const decisionsHead = db.select({ seq: schema.schedulerDecisions.seq }).from(schema.schedulerDecisions).orderBy(desc(schema.schedulerDecisions.seq)).limit(1).get()?.seq ?? 0;
    const decisions = pruneLogPrefix(
      db,
      { table: "scheduler_decisions", seq: "seq", createdAt: "created_at", mark: SCHEDULER_DECISIONS_MARK },
      cutoffIso(nowMs, decisionsBound.maxAgeDays),
      capFloorSeq(decisionsHead, decisionsBound.maxRows),
      batch,
    );
    // Not a bound but the same bounded-batch chore: messages of threads that never compact are indexed here, so the
    // first search after a long quiet stretch does not index them all at once (session 10's lazy recall index).
    const index = recallIndex(db);
    index.catchUp(batch);
    return {
      deleted: { events: events.deleted, compactionJobs: jobs.deleted, schedulerDecisions: decisions.deleted },
      more: events.full || jobs.full || decisions.full || index.lagging(),
    };
  }

  /** Every event seq up to this one is gone. */
  prunedThrough(): number {
    return readMark(this.deps.db, AGENT_EVENTS_MARK);
  }
}

/** When the next pass is due after one that left nothing behind. */
function nextPassAt(): number {
  return Date.now() + config.retention.intervalSeconds * 1_000;
}
