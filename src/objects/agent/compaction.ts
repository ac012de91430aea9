import { and, asc, desc, eq, gt, gte, inArray, isNull, lte, ne, sql } from "drizzle-orm";
import {
  admitCompactionJob,
  applyCompactionEvent,
  compactionJobId,
  DEFAULT_COMPACTION_RETRY_POLICY,
  newCompactionJob,
  recoverInterruptedJob,
  selectDueJobs,
  type CompactionJob,
  type CompactionJobEvent,
  type CompactionRetryPolicy,
} from "../../core/compaction-job";
import {
  DEFAULT_MEMORY_LIMITS,
  planCompaction,
  planCondensation,
  type CompactionSpan,
  type MemoryLimits,
  type MemoryMessageKind,
  type SummaryRef,
} from "../../core/memory-policy";
import { advancePointer, buildSummaryCommit, resolveSummaryCommit, type SummaryCommitResolution, type SummaryPointer } from "../../core/summary";
import type { SummarizableItem } from "../../core/summary";
import * as schema from "../../db/agent-schema";
import { nowIso } from "../sqlite";
import type { EventLog } from "./event-log";
import type { History } from "./history";
import type { AgentProfile } from "./profile";
import type { SummaryText } from "./summarizer";
import type { AgentDb } from "./types";

type JobRow = typeof schema.compactionJobs.$inferSelect;

export interface CompactionDeps {
  db: AgentDb;
  history: History;
  profile: AgentProfile;
  events: EventLog;
  summarize(request: { modelId: string; summaryDepth: number; attemptCount: number; items: SummarizableItem[] }): Promise<SummaryText>;
  /** Arranges another pass at `atMs` (a DO alarm for a later retry, a macrotask when already due); a stale wake-up just finds no work. */
  scheduleRetry(atMs: number): void;
  /** Test seam: throws at a named point when armed. */
  fault(point: string): void;
  limits?: MemoryLimits;
  policy?: CompactionRetryPolicy;
}

export interface PumpOutcome {
  committed: number;
  failed: number;
  /** Earliest nextAttemptAt of a job still pending, if any. */
  nextAttemptAt: number | null;
}

/** Raw-message token estimate in SQL, the same formula as `estimateTokens` (⌈UTF-8 bytes / 4⌉ + 4), over text and content. */
const TOKENS_SQL = sql<number>`(length(CAST(coalesce(${schema.messages.text}, '') AS BLOB)) + length(CAST(coalesce(${schema.messages.content}, '') AS BLOB)) + 3) / 4 + 4`;

/** What a raw message contributes to memory: its text, or its structured content rendered (bounded). */
export function memoryText(row: { text: string | null; content: unknown }): string {
  if (row.text !== null && row.text !== "") return row.text;
  if (row.content === null || row.content === undefined) return "";
  return JSON.stringify(row.content).slice(0, 4_000);
}

const KINDS = new Set<MemoryMessageKind>(["observation", "user", "assistant", "thought", "action", "toolResult", "summary", "system"]);
const asKind = (kind: string): MemoryMessageKind => (KINDS.has(kind as MemoryMessageKind) ? (kind as MemoryMessageKind) : "system");

/**
 * The compaction service of one agent (seed 000 `AgentMemoryCompactionService`): plans jobs when a
 * thread's hot tier overflows or a depth holds too many summaries, and works them off one at a time,
 * never on the reply path. Every read is bounded by the limits, not by the history length.
 */
export class Compaction {
  private pumping: Promise<PumpOutcome> | null = null;
  private readonly limits: MemoryLimits;
  private readonly policy: CompactionRetryPolicy;
  /** Test seam (VIGIL_FAULTS only, set by the DO): the worker's clock. */
  clock: (() => number) | null = null;

  constructor(private readonly deps: CompactionDeps) {
    this.limits = deps.limits ?? DEFAULT_MEMORY_LIMITS;
    this.policy = deps.policy ?? DEFAULT_COMPACTION_RETRY_POLICY;
  }

  private now(): number {
    return this.clock ? this.clock() : Date.now();
  }

  private agentId(): string {
    return this.deps.profile.get()?.id ?? "";
  }

  /** The thread's compaction pointer (0: nothing summarized yet). */
  compactedThroughSeq(threadId: string): number {
    return this.deps.db.select({ seq: schema.threadMemory.compactedThroughSeq }).from(schema.threadMemory).where(eq(schema.threadMemory.threadId, threadId)).get()?.seq ?? 0;
  }

  /** Plans at most one depth-0 job for the thread (hot tier overflow); returns the jobs created. */
  plan(threadId: string): number {
    const agentId = this.agentId();
    return agentId && this.planThread(agentId, threadId) ? 1 : 0;
  }

  /** Plans the condensations due (cold tier); only a committed summary can make one due. */
  planCondensations(): number {
    const agentId = this.agentId();
    if (!agentId) return 0;
    let created = 0;
    for (let depth = 0; depth < this.limits.maxSummaryDepth; depth++) if (this.planDepth(agentId, depth)) created++;
    return created;
  }

  private planThread(agentId: string, threadId: string): boolean {
    const db = this.deps.db;
    const after = this.compactedThroughSeq(threadId);
    const raw = and(eq(schema.messages.threadId, threadId), gt(schema.messages.seq, after), ne(schema.messages.kind, "summary"));
    // Counted over at most `cap` rows: above that the plan is the same (take the longest span), so a
    // backlog (a bulk import, a long outage) costs no more to plan than a steady-state thread.
    const cap = this.limits.hotMaxMessages + this.limits.compactionMaxSpanMessages;
    const newest = db.select({ tokens: TOKENS_SQL.as("tokens") }).from(schema.messages).where(raw).orderBy(desc(schema.messages.seq)).limit(cap).as("newest");
    const totals = db.select({ n: sql<number>`count(*)`, tokens: sql<number>`coalesce(sum(${newest.tokens}), 0)` }).from(newest).get();
    const oldest = db
      .select({ id: schema.messages.id, seq: schema.messages.seq, tokens: TOKENS_SQL })
      .from(schema.messages)
      .where(raw)
      .orderBy(asc(schema.messages.seq))
      .limit(this.limits.compactionMaxSpanMessages)
      .all();
    const plan = planCompaction(
      { agentId, threadId, oldestUncompacted: oldest.map((row) => ({ ...row, tokens: Number(row.tokens) })), uncompactedCount: Number(totals?.n ?? 0), uncompactedTokens: Number(totals?.tokens ?? 0) },
      this.limits,
    );
    return plan.action === "compact" && this.admit(plan.span);
  }

  private planDepth(agentId: string, depth: number): boolean {
    const db = this.deps.db;
    const open = and(eq(schema.summaries.summaryDepth, depth), isNull(schema.summaries.condensedInto));
    const n = Number(db.select({ n: sql<number>`count(*)` }).from(schema.summaries).where(open).get()?.n ?? 0);
    if (n <= this.limits.maxSummariesPerDepth) return false;
    const oldest = db.select().from(schema.summaries).where(open).orderBy(asc(schema.summaries.seq)).limit(this.limits.condenseBatchSize).all();
    const refs: SummaryRef[] = oldest.map((row) => ({ ...row, messageId: row.messageId, text: "" }));
    const plan = planCondensation({ agentId, summaryDepth: depth, oldestUncondensed: refs, uncondensedCount: n }, this.limits);
    return plan.action === "compact" && this.admit(plan.span);
  }

  /** Inserts a job for the span unless the span already has one or its thread has an open job (single-flight). */
  private admit(span: CompactionSpan): boolean {
    const db = this.deps.db;
    const id = compactionJobId(span);
    const rows = db
      .select()
      .from(schema.compactionJobs)
      .where(and(eq(schema.compactionJobs.agentId, span.agentId), eq(schema.compactionJobs.threadId, span.threadId), inArray(schema.compactionJobs.status, ["pending", "running"])))
      .all();
    const same = db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, id)).get();
    if (!admitCompactionJob([...rows, ...(same ? [same] : [])].map(toJob), span).admit) return false;
    const job = newCompactionJob(span, this.now());
    db.insert(schema.compactionJobs).values({ id, ...job, startSeq: span.startSeq, endSeq: span.endSeq, coveredFromSeq: span.coveredFromSeq, coveredThroughSeq: span.coveredThroughSeq }).run();
    return true;
  }

  /** On activation: a job left `running` lost its attempt to a crash or eviction. */
  recover(): void {
    const running = this.deps.db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.status, "running")).all();
    for (const row of running) this.writeJob(row, recoverInterruptedJob(toJob(row), this.now(), this.policy));
  }

  /** Works off due jobs (single-flight per agent, so per thread too), re-planning after each commit. */
  pump(maxJobs = 64): Promise<PumpOutcome> {
    this.pumping ??= this.work(maxJobs).finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private async work(maxJobs: number): Promise<PumpOutcome> {
    const outcome: PumpOutcome = { committed: 0, failed: 0, nextAttemptAt: null };
    for (let n = 0; n < maxJobs; n++) {
      const open = this.deps.db.select().from(schema.compactionJobs).where(inArray(schema.compactionJobs.status, ["pending", "running"])).orderBy(asc(schema.compactionJobs.nextAttemptAt)).limit(256).all();
      const [due] = selectDueJobs(open.map(toJob), this.now(), 1);
      if (!due) break;
      const row = open.find((candidate) => candidate.id === compactionJobId(due))!;
      const claimed = this.transition(row, { type: "claim", now: this.now() });
      if (!claimed) break;
      try {
        this.deps.fault("compaction.summarize");
        const items = this.items(row);
        const summary = await this.deps.summarize({ modelId: String(this.deps.profile.get()?.config.modelId ?? "builtin:echo"), summaryDepth: row.summaryDepth, attemptCount: claimed.attemptCount, items });
        this.deps.fault("compaction.beforeCommit");
        this.commit(row, summary);
        outcome.committed++;
        if (row.summaryDepth === 0) this.plan(row.threadId);
        this.planCondensations();
      } catch (error) {
        outcome.failed++;
        const current = this.deps.db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, row.id)).get();
        if (current?.status === "running") this.transition(current, { type: "fail", now: this.now(), error: String((error as Error)?.message ?? error).slice(0, 300) });
      }
    }
    const next = this.deps.db
      .select({ at: schema.compactionJobs.nextAttemptAt })
      .from(schema.compactionJobs)
      .where(eq(schema.compactionJobs.status, "pending"))
      .orderBy(asc(schema.compactionJobs.nextAttemptAt))
      .limit(1)
      .get();
    outcome.nextAttemptAt = next?.at ?? null;
    // A job already due (the batch limit was reached) continues only if this batch made progress, so a
    // job that cannot be claimed never turns into a busy loop; a later retry always gets a wake-up.
    const progressed = outcome.committed + outcome.failed > 0;
    if (outcome.nextAttemptAt !== null && (outcome.nextAttemptAt > this.now() || progressed)) this.deps.scheduleRetry(outcome.nextAttemptAt);
    return outcome;
  }

  /** The span's items, oldest first: raw messages (depth 0) or the condensed depth's summaries. */
  private items(job: JobRow): SummarizableItem[] {
    const db = this.deps.db;
    if (job.summaryDepth === 0) {
      return db
        .select({ id: schema.messages.id, kind: schema.messages.kind, text: schema.messages.text, content: schema.messages.content })
        .from(schema.messages)
        .where(and(eq(schema.messages.threadId, job.threadId), gte(schema.messages.seq, job.startSeq), lte(schema.messages.seq, job.endSeq), ne(schema.messages.kind, "summary")))
        .orderBy(asc(schema.messages.seq))
        .all()
        .map((row) => ({ id: row.id, kind: asKind(row.kind), text: memoryText(row) }));
    }
    return db
      .select({ id: schema.messages.id, text: schema.messages.text })
      .from(schema.summaries)
      .innerJoin(schema.messages, eq(schema.messages.id, schema.summaries.messageId))
      .where(and(eq(schema.summaries.summaryDepth, job.summaryDepth - 1), gte(schema.summaries.seq, job.startSeq), lte(schema.summaries.seq, job.endSeq)))
      .orderBy(asc(schema.summaries.seq))
      .all()
      .map((row) => ({ id: row.id, kind: "summary" as const, text: row.text ?? "" }));
  }

  /**
   * One transaction: the summary message (deterministic id), its span links, the job's `done`, then
   * the pointers — which therefore move only once the summary is committed, and only forwards. A
   * second commit under the same id with other content is kept out and recorded as a diagnostic.
   */
  commit(job: JobRow, summary: SummaryText): SummaryCommitResolution {
    const db = this.deps.db;
    const span: CompactionSpan = { ...job };
    const commit = buildSummaryCommit(span, summary.summarizerContractVersion, summary.text);
    return db.transaction(() => {
      const existing = db.select().from(schema.summaries).where(eq(schema.summaries.messageId, commit.summaryId)).get();
      const resolution = resolveSummaryCommit(existing ? { summaryId: existing.messageId, summaryContentHash: existing.summaryContentHash } : null, commit);
      if (resolution.action === "divergent_duplicate") {
        db.insert(schema.memoryDiagnostics).values({ code: resolution.diagnostic.code, summaryId: commit.summaryId, detail: { ...resolution.diagnostic, jobId: job.id, summarizer: summary.summarizer }, createdAt: nowIso() }).run();
      }
      if (resolution.action === "insert") {
        const threadId = job.threadId;
        const { message } = this.deps.history.append({
          id: commit.summaryId,
          threadId,
          kind: "summary",
          text: commit.text,
          metadata: {
            summaryDepth: job.summaryDepth,
            summaryStartMessageId: job.startMessageId,
            summaryEndMessageId: job.endMessageId,
            coveredFromSeq: job.coveredFromSeq,
            coveredThroughSeq: job.coveredThroughSeq,
            summaryContentHash: commit.summaryContentHash,
            summarizerContractVersion: commit.summarizerContractVersion,
            summarizer: summary.summarizer,
            summarizerReason: summary.reason,
          },
        });
        const seq = db.select({ seq: schema.messages.seq }).from(schema.messages).where(eq(schema.messages.id, message.id)).get()!.seq;
        db.insert(schema.summaries)
          .values({
            messageId: commit.summaryId,
            seq,
            threadId,
            summaryDepth: job.summaryDepth,
            startMessageId: job.startMessageId,
            endMessageId: job.endMessageId,
            startSeq: job.startSeq,
            endSeq: job.endSeq,
            coveredFromSeq: job.coveredFromSeq,
            coveredThroughSeq: job.coveredThroughSeq,
            summaryContentHash: commit.summaryContentHash,
            summarizerContractVersion: commit.summarizerContractVersion,
            condensedInto: null,
            createdAt: nowIso(),
          })
          .run();
        if (job.summaryDepth > 0) {
          db.update(schema.summaries)
            .set({ condensedInto: commit.summaryId })
            .where(and(eq(schema.summaries.summaryDepth, job.summaryDepth - 1), gte(schema.summaries.seq, job.startSeq), lte(schema.summaries.seq, job.endSeq), isNull(schema.summaries.condensedInto)))
            .run();
        }
      }
      const keptId = commit.summaryId;
      const stored = db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, job.id)).get();
      if (stored?.status === "running") {
        const done = applyCompactionEvent(toJob(stored), { type: "commit", now: this.now() }, this.policy);
        if (done.ok) this.writeJob(stored, done.job, { summaryMessageId: keptId, summarizer: summary.summarizer });
      }
      if (resolution.action !== "divergent_duplicate") this.advancePointers(job, keptId);
      return resolution;
    });
  }

  private advancePointers(job: JobRow, summaryMessageId: string): void {
    const db = this.deps.db;
    if (job.summaryDepth === 0) {
      const through = this.compactedThroughSeq(job.threadId);
      if (job.coveredThroughSeq > through) {
        db.insert(schema.threadMemory)
          .values({ threadId: job.threadId, compactedThroughSeq: job.coveredThroughSeq, latestSummaryMessageId: summaryMessageId, updatedAt: nowIso() })
          .onConflictDoUpdate({ target: schema.threadMemory.threadId, set: { compactedThroughSeq: job.coveredThroughSeq, latestSummaryMessageId: summaryMessageId, updatedAt: nowIso() } })
          .run();
      }
    }
    const state = this.deps.profile.state();
    if (!state) return;
    const currentRow = state.latestSummaryMessageId
      ? db.select().from(schema.summaries).where(eq(schema.summaries.messageId, state.latestSummaryMessageId)).get()
      : undefined;
    const current: SummaryPointer | null = currentRow ? { messageId: currentRow.messageId, summaryDepth: currentRow.summaryDepth, coveredThroughSeq: currentRow.coveredThroughSeq } : null;
    const advance = advancePointer(current, { messageId: summaryMessageId, summaryDepth: job.summaryDepth, coveredThroughSeq: job.coveredThroughSeq });
    if (advance.moved) {
      db.update(schema.agentState).set({ latestSummaryMessageId: advance.pointer.messageId, revision: state.revision + 1 }).run();
    }
  }

  private transition(row: JobRow, event: CompactionJobEvent): CompactionJob | null {
    const next = applyCompactionEvent(toJob(row), event, this.policy);
    if (!next.ok) return null;
    this.writeJob(row, next.job);
    return next.job;
  }

  private writeJob(row: JobRow, job: CompactionJob, extra: Partial<Pick<JobRow, "summaryMessageId" | "summarizer">> = {}): void {
    this.deps.db
      .update(schema.compactionJobs)
      .set({ status: job.status, attemptCount: job.attemptCount, nextAttemptAt: job.nextAttemptAt, lastError: job.lastError, updatedAt: job.updatedAt, ...extra })
      .where(eq(schema.compactionJobs.id, row.id))
      .run();
  }

  /** Manual / maintenance restart of a terminal failure (seed 000: "can be retried manually"). */
  requeue(jobId: string): boolean {
    const row = this.deps.db.select().from(schema.compactionJobs).where(eq(schema.compactionJobs.id, jobId)).get();
    return row ? this.transition(row, { type: "requeue", now: this.now() }) !== null : false;
  }

  /** Requeues every terminal failure with a fresh attempt budget; returns how many. */
  requeueFailed(): number {
    const failed = this.deps.db.select({ id: schema.compactionJobs.id }).from(schema.compactionJobs).where(eq(schema.compactionJobs.status, "failed_terminal")).all();
    return failed.filter((row) => this.requeue(row.id)).length;
  }

  /** Jobs of the agent, newest first (bounded), for the memory view and tests. */
  jobs(limit = 50): JobRow[] {
    return this.deps.db.select().from(schema.compactionJobs).orderBy(desc(schema.compactionJobs.createdAt), desc(schema.compactionJobs.id)).limit(limit).all();
  }
}

function toJob(row: JobRow): CompactionJob {
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
