import { and, asc, eq, gte, lte, ne, sql } from "drizzle-orm";
import { compactionJobId, DEFAULT_COMPACTION_RETRY_POLICY, selectDueJobs, type CompactionRetryPolicy } from "../../../core/memory/compaction-job";
import { DEFAULT_MEMORY_LIMITS, type MemoryLimits, type MemoryMessageKind } from "../../../core/memory/memory-policy";
import type { SummarizableItem, SummaryCommitResolution } from "../../../core/memory/summary";
import * as schema from "../../../db/agent-schema";
import { CompactionJobs, toJob, type JobRow } from "./jobs";
import { CompactionPlanner } from "./planner";
import type { EventLog } from "../events";
import type { History } from "../memory";
import { recallIndex } from "../rows";
import type { AgentProfile } from "../lifecycle";
import { compactedThroughSeq, SummaryCommitter } from "./summary-commit";
import type { SummaryText } from "./summarizer";
import type { AgentDb } from "../types";

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
  /** The agent's id once known ("" before it exists); defaults to reading the profile, which costs a query per plan. */
  agentId?: () => string;
  limits?: MemoryLimits;
  policy?: CompactionRetryPolicy;
}

export interface PumpOutcome {
  committed: number;
  failed: number;
  /** Earliest nextAttemptAt of a job still pending, if any. */
  nextAttemptAt: number | null;
}

/** What a raw message contributes to memory: its text, or its structured content rendered (bounded). */
export function memoryText(row: { text: string | null; content: unknown }): string {
  if (row.text !== null && row.text !== "") return row.text;
  if (row.content === null || row.content === undefined) return "";
  return JSON.stringify(row.content).slice(0, 4_000);
}

/** Messages indexed for recall per compaction pass; a search indexes whatever is left. */
const RECALL_INDEX_BATCH = 500;

const KINDS = new Set<MemoryMessageKind>(["observation", "user", "assistant", "thought", "action", "toolResult", "summary", "system"]);
const asKind = (kind: string): MemoryMessageKind => (KINDS.has(kind as MemoryMessageKind) ? (kind as MemoryMessageKind) : "system");

const p = (name: string) => sql.placeholder(name);
/** A job's span reads (raw messages; a condensed depth's summaries): bound when a job is worked, built once per isolate (session 11). */
const RAW_ITEMS = (db: AgentDb) => {
  const m = schema.messages;
  return db
    .select({ id: m.id, kind: m.kind, text: m.text, content: m.content })
    .from(m)
    .where(and(eq(m.threadId, p("threadId")), gte(m.seq, p("startSeq")), lte(m.seq, p("endSeq")), ne(m.kind, "summary")))
    .orderBy(asc(m.seq))
    .prepare();
};
const SUMMARY_ITEMS = (db: AgentDb) => {
  const m = schema.messages;
  const s = schema.summaries;
  return db
    .select({ id: m.id, text: m.text })
    .from(s)
    .innerJoin(m, eq(m.id, s.messageId))
    .where(and(eq(s.summaryDepth, p("depth")), gte(s.seq, p("startSeq")), lte(s.seq, p("endSeq"))))
    .orderBy(asc(s.seq))
    .prepare();
};

/**
 * The compaction service of one agent (seed 000 `AgentMemoryCompactionService`): plans jobs when a
 * thread's hot tier overflows or a depth holds too many summaries (compaction-planner.ts), and works
 * them off one at a time (job rows: compaction-jobs.ts; landing a summary: summary-commit.ts), never
 * on the reply path. Every read is bounded by the limits, not by the history length.
 */
export class Compaction {
  private pumping: Promise<PumpOutcome> | null = null;
  private readonly jobStore: CompactionJobs;
  private readonly planner: CompactionPlanner;
  /** Used only when a summary lands: made on first use, so a cold wake that commits none binds none of it (session 11). */
  private committerMade: SummaryCommitter | null = null;
  /** Test seam (VIGIL_FAULTS only, set by the DO): the worker's clock. */
  clock: (() => number) | null = null;

  constructor(private readonly deps: CompactionDeps) {
    const now = () => this.now();
    this.jobStore = new CompactionJobs(deps.db, deps.policy ?? DEFAULT_COMPACTION_RETRY_POLICY, now);
    this.planner = new CompactionPlanner({ db: deps.db, jobs: this.jobStore, limits: deps.limits ?? DEFAULT_MEMORY_LIMITS, now, agentId: deps.agentId ?? (() => deps.profile.get()?.id ?? "") });
  }

  private get committer(): SummaryCommitter {
    const { db, history, profile } = this.deps;
    this.committerMade ??= new SummaryCommitter({ db, history, profile, jobs: this.jobStore, now: () => this.now(), fault: (point) => this.deps.fault(point) });
    return this.committerMade;
  }

  private now(): number {
    return this.clock ? this.clock() : Date.now();
  }

  /** The thread's compaction pointer (0: nothing summarized yet). */
  compactedThroughSeq(threadId: string): number {
    return compactedThroughSeq(this.deps.db, threadId);
  }

  /** Plans at most one depth-0 job for the thread (hot tier overflow); returns the jobs created. */
  plan(threadId: string): number {
    return this.planner.plan(threadId);
  }

  /** Plans the condensations due (cold tier); only a committed summary can make one due. */
  planCondensations(): number {
    return this.planner.planCondensations();
  }

  /** On activation: a job left `running` lost its attempt to a crash or eviction. True when any job is open (pending or running). */
  recover(): boolean {
    return this.jobStore.recover();
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
    let noneOpen = false;
    for (let n = 0; n < maxJobs; n++) {
      const open = this.jobStore.open();
      // No job pending or running (every run's "maybe compact" after a plan that created none; and after the batch's
      // last commit, unless it planned another): nothing to retry either, and nothing writes a job before the loop ends.
      if (open.length === 0) noneOpen = true;
      const [due] = selectDueJobs(open.map(toJob), this.now(), 1);
      if (!due) break;
      const row = open.find((candidate) => candidate.id === compactionJobId(due))!;
      const claimed = this.jobStore.transition(row, { type: "claim", now: this.now() });
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
        const current = this.jobStore.get(row.id);
        if (current?.status === "running") this.jobStore.transition(current, { type: "fail", now: this.now(), error: String((error as Error)?.message ?? error).slice(0, 300) });
      }
    }
    // Recall's index catches up in a bounded batch (rows/recall-index.ts) while compaction works anyway: one FTS5
    // segment for the messages since the last batch (and the summaries just written), instead of one per message.
    if (outcome.committed > 0) recallIndex(this.deps.db).catchUp(RECALL_INDEX_BATCH);
    outcome.nextAttemptAt = noneOpen ? null : this.jobStore.nextPendingAt();
    // A job already due (the batch limit was reached) continues only if this batch made progress, so a
    // job that cannot be claimed never turns into a busy loop; a later retry always gets a wake-up.
    const progressed = outcome.committed + outcome.failed > 0;
    if (outcome.nextAttemptAt !== null && (outcome.nextAttemptAt > this.now() || progressed)) this.deps.scheduleRetry(outcome.nextAttemptAt);
    return outcome;
  }

  /** The span's items, oldest first: raw messages (depth 0) or the condensed depth's summaries. */
  private items(job: JobRow): SummarizableItem[] {
    if (job.summaryDepth === 0) {
      return RAW_ITEMS(this.deps.db).all({ threadId: job.threadId, startSeq: job.startSeq, endSeq: job.endSeq }).map((row) => ({ id: row.id, kind: asKind(row.kind), text: memoryText(row) }));
    }
    return SUMMARY_ITEMS(this.deps.db)
      .all({ depth: job.summaryDepth - 1, startSeq: job.startSeq, endSeq: job.endSeq })
      .map((row) => ({ id: row.id, kind: "summary" as const, text: row.text ?? "" }));
  }

  /** Lands the summary and moves the pointers in one transaction (summary-commit.ts); a divergent duplicate is kept out. */
  commit(job: JobRow, summary: SummaryText): SummaryCommitResolution {
    return this.committer.commit(job, summary);
  }

  /** Manual / maintenance restart of a terminal failure (seed 000: "can be retried manually"). */
  requeue(jobId: string): boolean {
    return this.jobStore.requeue(jobId);
  }

  /** Requeues every terminal failure with a fresh attempt budget; returns how many. */
  requeueFailed(): number {
    return this.jobStore.requeueFailed();
  }

  /** Jobs of the agent, newest first (bounded), for the memory view and tests. */
  jobs(limit = 50): JobRow[] {
    return this.jobStore.list(limit);
  }
}
