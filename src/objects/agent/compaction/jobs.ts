import { asc, desc, eq, inArray, sql } from "drizzle-orm";
import { applyCompactionEvent, recoverInterruptedJob, type CompactionJob, type CompactionJobEvent, type CompactionRetryPolicy } from "../../../core/memory/compaction-job";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";
import { leanSite, rawRowsSite, rawSite } from "../../shared/statements/statement-sites";
import { tableRowDecoder } from "../../shared/statements/lean-query";

export type JobRow = typeof schema.compactionJobs.$inferSelect;

/** Extra columns a job's `done` records: which summary it produced and by which summarizer. */
export type JobCommitExtra = Partial<Pick<JobRow, "summaryMessageId" | "summarizer">>;

const p = (name: string) => sql.placeholder(name);
// Built once per isolate (objects/shared/statements/statement-sites.ts, session 11).
const BY_ID = leanSite("compaction.jobs.byId", (db: AgentDb) => db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, p("id"))).prepare());
const OPEN = leanSite("compaction.jobs.open", (db: AgentDb) => {
  const j = schema.compactionJobs;
  return db.select().from(j).where(inArray(j.status, ["pending", "running"])).orderBy(asc(j.nextAttemptAt)).limit(p("limit")).prepare();
});
const NEXT_PENDING = leanSite("compaction.jobs.nextPending", (db: AgentDb) => {
  const j = schema.compactionJobs;
  return db.select({ at: j.nextAttemptAt }).from(j).where(eq(j.status, "pending")).orderBy(asc(j.nextAttemptAt)).limit(1).prepare();
});
const STATE = () => sql`"status" = ${p("status")}, "attempt_count" = ${p("attemptCount")}, "next_attempt_at" = ${p("nextAttemptAt")}, "last_error" = ${p("lastError")}, "updated_at" = ${p("updatedAt")}`;
const WRITE = rawSite("compaction.jobs.write", () => sql`UPDATE "compaction_jobs" SET ${STATE()} WHERE "id" = ${p("id")}`);
const WRITE_COMMIT = rawSite("compaction.jobs.writeCommit", () => sql`UPDATE "compaction_jobs" SET ${STATE()}, "summary_message_id" = ${p("summaryMessageId")}, "summarizer" = ${p("summarizer")} WHERE "id" = ${p("id")}`);

const jobRow = tableRowDecoder<JobRow>(schema.compactionJobs);
/** Every running job, and one pending job if there is any (both through `compaction_jobs_ready`). */
const RECOVERY = rawRowsSite("compaction.jobs.recovery", () => {
  const columns = jobRow.columns.map((name) => `"${name}"`).join(", ");
  return sql.raw(`SELECT ${columns} FROM "compaction_jobs" WHERE "status" = 'running' UNION ALL SELECT * FROM (SELECT ${columns} FROM "compaction_jobs" WHERE "status" = 'pending' LIMIT 1)`);
});

/** The compaction_jobs rows of one agent: reads, and state changes only through the pure job machine (src/core/memory/compaction-job.ts). */
export class CompactionJobs {
  /** Every run's "maybe compact" and every plan read these (issue 12 §8). */
  private readonly byId;
  private readonly openQuery;
  private readonly nextPendingQuery;
  /** A transition's write, and a commit's (which also records the summary). */
  private readonly writeQuery;
  private readonly writeCommitQuery;

  constructor(
    private readonly db: AgentDb,
    private readonly policy: CompactionRetryPolicy,
    private readonly now: () => number,
  ) {
    this.byId = BY_ID.bind(db);
    this.openQuery = OPEN.bind(db);
    this.nextPendingQuery = NEXT_PENDING.bind(db);
    this.writeQuery = WRITE.bind(db);
    this.writeCommitQuery = WRITE_COMMIT.bind(db);
  }

  get(jobId: string): JobRow | undefined {
    return this.byId.get({ id: jobId });
  }

  /**
   * No job is pending or running, as a read found and nothing has written since (issue 12 §8: every run's "maybe
   * compact" read the open jobs, almost always to find none). Exact: a job becomes open only through a write of this
   * class (claim, fail, requeue, recovery; every write clears it) or the planner's insert (`inserted`); the other
   * writers only delete jobs (retention of done jobs, erasure). The read runs on the pump's macrotask, never inside a
   * transaction that could roll back what it saw.
   */
  private noneOpen = false;

  /** Pending and running jobs, earliest attempt first (bounded). */
  open(limit = 256): JobRow[] {
    if (this.noneOpen) return [];
    const rows = this.openQuery.all({ limit });
    this.noneOpen = rows.length === 0;
    return rows;
  }

  /** The activation's one read found no job pending or running (activation.ts), and nothing has written one since. */
  knownNoneOpen(): void {
    this.noneOpen = true;
  }

  /** The planner inserted a job (pending). */
  inserted(): void {
    this.noneOpen = false;
  }

  /** Earliest nextAttemptAt of a job still pending, if any. */
  nextPendingAt(): number | null {
    return this.nextPendingQuery.get()?.at ?? null;
  }

  /**
   * On activation: a job left `running` lost its attempt to a crash or eviction. One read (session 11) answers both
   * activation questions: every running job (recovered here) and whether any job was open at all (pending or running);
   * false means the activation's pump has nothing to do.
   */
  recover(): boolean {
    const rows = RECOVERY.bind(this.db).all().map(jobRow.decode);
    for (const row of rows) if (row.status === "running") this.write(row, recoverInterruptedJob(toJob(row), this.now(), this.policy));
    return rows.length > 0;
  }

  /** Applies the event to the stored job; null (and nothing written) when the machine refuses it. */
  transition(row: JobRow, event: CompactionJobEvent, extra: JobCommitExtra = {}): CompactionJob | null {
    const next = applyCompactionEvent(toJob(row), event, this.policy);
    if (!next.ok) return null;
    this.write(row, next.job, extra);
    return next.job;
  }

  private write(row: JobRow, job: CompactionJob, extra: JobCommitExtra = {}): void {
    this.noneOpen = false;
    const state = { id: row.id, status: job.status, attemptCount: job.attemptCount, nextAttemptAt: job.nextAttemptAt, lastError: job.lastError, updatedAt: job.updatedAt };
    if (extra.summaryMessageId === undefined && extra.summarizer === undefined) this.writeQuery.all(state);
    else if (extra.summaryMessageId !== undefined && extra.summarizer !== undefined) this.writeCommitQuery.all({ ...state, summaryMessageId: extra.summaryMessageId, summarizer: extra.summarizer });
    else this.db.update(schema.compactionJobs).set({ ...state, id: undefined, ...extra }).where(eq(schema.compactionJobs.id, row.id)).run();
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
