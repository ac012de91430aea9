import { asc, desc, eq, inArray, sql } from "drizzle-orm";
import { applyCompactionEvent, recoverInterruptedJob, type CompactionJob, type CompactionJobEvent, type CompactionRetryPolicy } from "../../../core/memory/compaction-job";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";
import { handWritten } from "../../shared/sqlite";

export type JobRow = typeof schema.compactionJobs.$inferSelect;

/** Extra columns a job's `done` records: which summary it produced and by which summarizer. */
export type JobCommitExtra = Partial<Pick<JobRow, "summaryMessageId" | "summarizer">>;

const p = (name: string) => sql.placeholder(name);
const BY_ID = (db: AgentDb) => db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, p("id"))).prepare();
const OPEN = (db: AgentDb) => {
  const j = schema.compactionJobs;
  return db.select().from(j).where(inArray(j.status, ["pending", "running"])).orderBy(asc(j.nextAttemptAt)).limit(p("limit")).prepare();
};
const NEXT_PENDING = (db: AgentDb) => {
  const j = schema.compactionJobs;
  return db.select({ at: j.nextAttemptAt }).from(j).where(eq(j.status, "pending")).orderBy(asc(j.nextAttemptAt)).limit(1).prepare();
};
/** The compaction_jobs rows of one agent: reads, and state changes only through the pure job machine (src/core/memory/compaction-job.ts). */
export class CompactionJobs {
  /** Every run's "maybe compact" and every plan read these (issue 12 §8). */
  private readonly byId;
  private readonly openQuery;
  private readonly nextPendingQuery;

  constructor(
    private readonly db: AgentDb,
    private readonly policy: CompactionRetryPolicy,
    private readonly now: () => number,
  ) {
    this.byId = BY_ID(db);
    this.openQuery = OPEN(db);
    this.nextPendingQuery = NEXT_PENDING(db);
  }

  get(jobId: string): JobRow | undefined {
    return this.byId.get({ id: jobId });
  }

  /** Pending and running jobs, earliest attempt first (bounded). */
  open(limit = 256): JobRow[] {
    return this.openQuery.all({ limit });
  }

  /** Earliest nextAttemptAt of a job still pending, if any. */
  nextPendingAt(): number | null {
    return this.nextPendingQuery.get()?.at ?? null;
  }

  /**
   * On activation: a job left `running` lost its attempt to a crash or eviction. Returns whether any job is open
   * (pending or running); false means the activation's pump has nothing to do.
   */
  recover(): boolean {
    const j = schema.compactionJobs;
    const running = this.db.select().from(j).where(eq(j.status, "running")).all();
    for (const row of running) this.write(row, recoverInterruptedJob(toJob(row), this.now(), this.policy));
    return running.length > 0 || this.db.select({ id: j.id }).from(j).where(eq(j.status, "pending")).limit(1).get() !== undefined;
  }

  /** Applies the event to the stored job; null (and nothing written) when the machine refuses it. */
  transition(row: JobRow, event: CompactionJobEvent, extra: JobCommitExtra = {}): CompactionJob | null {
    const next = applyCompactionEvent(toJob(row), event, this.policy);
    if (!next.ok) return null;
    this.write(row, next.job, extra);
    return next.job;
  }

  private write(row: JobRow, job: CompactionJob, extra: JobCommitExtra = {}): void {
    const state = { status: job.status, attemptCount: job.attemptCount, nextAttemptAt: job.nextAttemptAt, lastError: job.lastError, updatedAt: job.updatedAt };
    this.db.update(schema.compactionJobs).set({ ...state, ...extra }).where(eq(schema.compactionJobs.id, row.id)).run();
  }

  /** Manual / maintenance restart of a terminal failure (seed 000: "can be retried manually"). */
  requeue(jobId: string): boolean {
    const row = this.get(jobId);
    return row ? this.transition(row, { type: "requeue", now: this.now() }) !== null : false;
  }

  /** Requeues every terminal failure with a fresh attempt budget; returns how many. */
  requeueFailed(): number {
    const failed = this.db.select({ id: schema.compactionJobs.id }).from(schema.compactionJobs).where(eq(schema.compactionJobs.status, "failed_terminal")).all();
    return failed.filter((row) => this.requeue(row.id)).length;
  }

  /** Jobs of the agent, newest first (bounded), for the memory view and tests. */
  list(limit = 50): JobRow[] {
    return this.db.select().from(schema.compactionJobs).orderBy(desc(schema.compactionJobs.createdAt), desc(schema.compactionJobs.id)).limit(limit).all();
  }
}

export function toJob(row: JobRow): CompactionJob {
  return {
    agentId: row.agentId,
    threadId: row.threadId,
    startMessageId: row.startMessageId,
    endMessageId: row.endMessageId,
    summaryDepth: row.summaryDepth,
    status: row.status as CompactionJob["status"],
    attemptCount: row.attemptCount,
    nextAttemptAt: row.nextAttemptAt,
    lastError: row.lastError,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
