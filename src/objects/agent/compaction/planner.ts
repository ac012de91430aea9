import { and, asc, desc, eq, gt, inArray, isNull, ne, sql } from "drizzle-orm";
import { admitCompactionJob, compactionJobId, newCompactionJob } from "../../../core/memory/compaction-job";
import { planCompaction, planCondensation, type CompactionSpan, type MemoryLimits, type SummaryRef } from "../../../core/memory/memory-policy";
import * as schema from "../../../db/agent-schema";
import { toJob, type CompactionJobs } from "./jobs";
import { compactedThroughSeq } from "./summary-commit";
import type { AgentDb } from "../types";
import { handWritten } from "../../shared/sqlite";

/** Raw-message token estimate in SQL, the same formula as `estimateTokens` (⌈UTF-8 bytes / 4⌉ + 4), over text and content. */
const TOKENS_SQL = sql<number>`(length(CAST(coalesce(${schema.messages.text}, '') AS BLOB)) + length(CAST(coalesce(${schema.messages.content}, '') AS BLOB)) + 3) / 4 + 4`;

const ph = (name: string) => sql.placeholder(name);
/** A thread's raw (not summary) messages after `after`. */
const rawAfter = () => and(eq(schema.messages.threadId, ph("threadId")), gt(schema.messages.seq, ph("after")), ne(schema.messages.kind, "summary"));
/** A depth's summaries not yet condensed. */
const openAtDepth = () => and(eq(schema.summaries.summaryDepth, ph("depth")), isNull(schema.summaries.condensedInto));

// The full plan's and the admission's statements, prepared once per object.
const BACKLOG_TOTALS = (db: AgentDb) => {
  const m = schema.messages;
  const newest = db.select({ tokens: TOKENS_SQL.as("tokens") }).from(m).where(rawAfter()).orderBy(desc(m.seq)).limit(ph("cap")).as("newest");
  return db.select({ n: sql<number>`count(*)`, tokens: sql<number>`coalesce(sum(${newest.tokens}), 0)` }).from(newest).prepare();
};
const OLDEST = (db: AgentDb) => {
  const m = schema.messages;
  return db.select({ id: m.id, seq: m.seq, tokens: TOKENS_SQL }).from(m).where(rawAfter()).orderBy(asc(m.seq)).limit(ph("limit")).prepare();
};
/**
 * Every depth's open summaries counted in one statement (session 13: one per depth, three per summary commit): each
 * count is the per-depth count it was, on `summaries_depth_open`, so flat in history.
 */
const OPEN_DEPTH_COUNTS = handWritten<{ depth: number; n: number }>((v) => sql`WITH RECURSIVE "d"("depth") AS (SELECT 0 WHERE ${v.max} > 0 UNION ALL SELECT "depth" + 1 FROM "d" WHERE "depth" + 1 < ${v.max})
          SELECT "depth", (SELECT count(*) FROM "summaries" WHERE "summary_depth" = "d"."depth" AND "condensed_into" IS NULL) AS "n" FROM "d" ORDER BY "depth"`);
const OLDEST_OPEN = (db: AgentDb) =>
  db.select().from(schema.summaries).where(openAtDepth()).orderBy(asc(schema.summaries.seq)).limit(ph("limit")).prepare();
const THREAD_OPEN_JOBS = (db: AgentDb) => {
  const j = schema.compactionJobs;
  return db.select().from(j).where(and(eq(j.agentId, ph("agentId")), eq(j.threadId, ph("threadId")), inArray(j.status, ["pending", "running"]))).prepare();
};
const JOB_COLUMNS = ["id", "agentId", "threadId", "startMessageId", "endMessageId", "summaryDepth", "startSeq", "endSeq", "coveredFromSeq", "coveredThroughSeq", "status", "attemptCount", "nextAttemptAt", "lastError", "createdAt", "updatedAt"] as const;
const INSERT_JOB = (db: AgentDb) =>
  db
    .insert(schema.compactionJobs)
    .values(Object.fromEntries(JOB_COLUMNS.map((name) => [name, ph(name)])) as unknown as typeof schema.compactionJobs.$inferInsert)
    .prepare();
/**
 * A plan's first read: the thread's raw rows after its compaction pointer (count and tokens; the token formula is
 * TOKENS_SQL), at most `cap` of them, on `messages_thread_seq`: flat in history length.
 */
const ADDED = handWritten<{ n: number; tokens: number; last: number | null; pointer: number }>((v) => {
  const m = schema.messages;
  const pointer = sql`coalesce((SELECT "compacted_through_seq" FROM "thread_memory" WHERE "thread_id" = ${v.threadId}), 0)`;
  return sql`SELECT count(*) AS n, coalesce(sum(tokens), 0) AS tokens, max(seq) AS last, ${pointer} AS pointer
          FROM (SELECT ${m.seq} AS seq, ${TOKENS_SQL} AS tokens FROM ${m}
          WHERE ${m.threadId} = ${v.threadId} AND ${m.seq} > ${pointer} AND ${m.kind} != 'summary' ORDER BY ${m.seq} LIMIT ${v.cap})`;
});

export interface CompactionPlannerDeps {
  db: AgentDb;
  jobs: CompactionJobs;
  limits: MemoryLimits;
  now(): number;
  /** The agent's id, "" before the agent exists (nothing is planned then). */
  agentId(): string;
}

/** Decides which spans need a compaction job (hot tier overflow, too many summaries at a depth) and admits them single-flight. */
export class CompactionPlanner {
  /** A plan's one read (ADDED). */
  private readonly addedQuery;
  /** The full plan's and the admission's statements (drizzle built them on every plan before session 9). */
  private readonly backlogTotalsQuery;
  private readonly oldestQuery;
  private readonly openDepthCountsQuery;
  private readonly oldestOpenQuery;
  private readonly threadOpenJobsQuery;
  private readonly insertJob;

  constructor(private readonly deps: CompactionPlannerDeps) {
    const { db } = deps;
    this.backlogTotalsQuery = BACKLOG_TOTALS(db);
    this.oldestQuery = OLDEST(db);
    this.openDepthCountsQuery = OPEN_DEPTH_COUNTS(db);
    this.oldestOpenQuery = OLDEST_OPEN(db);
    this.threadOpenJobsQuery = THREAD_OPEN_JOBS(db);
    this.insertJob = INSERT_JOB(db);
    this.addedQuery = ADDED(db);
  }

  /** Plans at most one depth-0 job for the thread (hot tier overflow); returns the jobs created. */
  plan(threadId: string): number {
    const agentId = this.deps.agentId();
    if (!agentId) return 0;
    // Below both limits nothing is planned whatever else holds: only a crossing needs the full plan.
    const { limits } = this.deps;
    const cap = limits.hotMaxMessages + limits.compactionMaxSpanMessages;
    const added = this.addedQuery.get({ threadId, cap });
    const count = Number(added?.n ?? 0);
    if (count < cap && count <= limits.hotMaxMessages && Number(added?.tokens ?? 0) <= limits.hotMaxTokens) return 0;
    return this.planThread(agentId, threadId) ? 1 : 0;
  }

  /** Plans the condensations due (cold tier); only a committed summary can make one due. */
  planCondensations(): number {
    const agentId = this.deps.agentId();
    if (!agentId) return 0;
    let created = 0;
    // Counted before any job is admitted, as when each depth counted in turn: an admission writes a job, not a summary.
    for (const { depth, n } of this.openDepthCountsQuery.all({ max: Math.ceil(this.deps.limits.maxSummaryDepth) })) if (this.planDepth(agentId, Number(depth), Number(n))) created++;
    return created;
  }

  private planThread(agentId: string, threadId: string): boolean {
    const { db, limits } = this.deps;
    const after = compactedThroughSeq(db, threadId);
    // Counted over at most `cap` rows: above that the plan is the same (take the longest span), so a
    // backlog (a bulk import, a long outage) costs no more to plan than a steady-state thread.
    const cap = limits.hotMaxMessages + limits.compactionMaxSpanMessages;
    const totals = this.backlogTotalsQuery.get({ threadId, after, cap });
    const oldest = this.oldestQuery.all({ threadId, after, limit: limits.compactionMaxSpanMessages });
    const plan = planCompaction(
      { agentId, threadId, oldestUncompacted: oldest.map((row) => ({ ...row, tokens: Number(row.tokens) })), uncompactedCount: Number(totals?.n ?? 0), uncompactedTokens: Number(totals?.tokens ?? 0) },
      limits,
    );
    return plan.action === "compact" && this.admit(plan.span);
  }

  private planDepth(agentId: string, depth: number, n: number): boolean {
    const { limits } = this.deps;
    if (n <= limits.maxSummariesPerDepth) return false;
    const oldest = this.oldestOpenQuery.all({ depth, limit: limits.condenseBatchSize });
    const refs: SummaryRef[] = oldest.map((row) => ({ ...row, messageId: row.messageId, text: "" }));
    const plan = planCondensation({ agentId, summaryDepth: depth, oldestUncondensed: refs, uncondensedCount: n }, limits);
    return plan.action === "compact" && this.admit(plan.span);
  }

  /** Inserts a job for the span unless the span already has one or its thread has an open job (single-flight). */
  private admit(span: CompactionSpan): boolean {
    const id = compactionJobId(span);
    const rows = this.threadOpenJobsQuery.all({ agentId: span.agentId, threadId: span.threadId });
    const same = this.deps.jobs.get(id);
    if (!admitCompactionJob([...rows, ...(same ? [same] : [])].map(toJob), span).admit) return false;
    const job = newCompactionJob(span, this.deps.now());
    this.insertJob.run({ id, ...job, startSeq: span.startSeq, endSeq: span.endSeq, coveredFromSeq: span.coveredFromSeq, coveredThroughSeq: span.coveredThroughSeq });
    return true;
  }
}
