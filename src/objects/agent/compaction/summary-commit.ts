import { eq, sql } from "drizzle-orm";
import type { CompactionSpan } from "../../../core/memory/memory-policy";
import { advancePointer, buildSummaryCommit, resolveSummaryCommit, type SummaryCommitResolution, type SummaryPointer } from "../../../core/memory/summary";
import * as schema from "../../../db/agent-schema";
import { nowIso, handWritten } from "../../shared/sqlite";
import type { CompactionJobs, JobRow } from "./jobs";
import type { History } from "../memory";
import type { AgentProfile } from "../lifecycle";
import type { SummaryText } from "./summarizer";
import type { AgentDb } from "../types";
import { leanSummaryMetadata } from "../rows";

/** The thread's compaction pointer (0: nothing summarized yet). */
export function compactedThroughSeq(db: AgentDb, threadId: string): number {
  const tm = schema.threadMemory;
  return db.select({ seq: tm.compactedThroughSeq }).from(tm).where(eq(tm.threadId, threadId)).get()?.seq ?? 0;
}

const p = (name: string) => sql.placeholder(name);
// A commit's statements (session 9: drizzle built each of them on every commit), built once per isolate (session 11).
const SUMMARY_BY_ID = (db: AgentDb) => db.select().from(schema.summaries).where(eq(schema.summaries.messageId, p("id"))).prepare();
const INSERT_SUMMARY = (db: AgentDb) =>
  db
    .insert(schema.summaries)
    .values({
      messageId: p("messageId"),
      seq: p("seq"),
      threadId: p("threadId"),
      summaryDepth: p("summaryDepth"),
      startMessageId: p("startMessageId"),
      endMessageId: p("endMessageId"),
      startSeq: p("startSeq"),
      endSeq: p("endSeq"),
      coveredFromSeq: p("coveredFromSeq"),
      coveredThroughSeq: p("coveredThroughSeq"),
      summaryContentHash: p("summaryContentHash"),
      summarizerContractVersion: p("summarizerContractVersion"),
      condensedInto: null,
      createdAt: p("createdAt"),
    })
    .prepare();
/**
 * The thread's pointer moved forwards only (session 13: its read and the write were two statements): inserted when the
 * thread has none (read as 0, so only a positive pointer), updated only past the stored one. Returns the row it wrote.
 */
const ADVANCE_POINTER = handWritten<{ through: number }>((v) => sql`INSERT INTO "thread_memory" ("thread_id", "compacted_through_seq", "latest_summary_message_id", "updated_at")
          SELECT ${v.threadId}, ${v.through}, ${v.summaryId}, ${v.updatedAt} WHERE ${v.through} > 0
          ON CONFLICT ("thread_id") DO UPDATE SET "compacted_through_seq" = excluded."compacted_through_seq", "latest_summary_message_id" = excluded."latest_summary_message_id", "updated_at" = excluded."updated_at"
            WHERE excluded."compacted_through_seq" > "thread_memory"."compacted_through_seq"
          RETURNING "compacted_through_seq" AS "through"`);
/** A condensation's inputs: the depth below's open summaries in the span (drizzle built it on every commit until session 13). */
const CONDENSE = handWritten((v) => sql`UPDATE "summaries" SET "condensed_into" = ${v.summaryId} WHERE "summary_depth" = ${v.depth} AND "seq" >= ${v.startSeq} AND "seq" <= ${v.endSeq} AND "condensed_into" IS NULL`);
const MOVE_POINTER = handWritten((v) => sql`UPDATE "agent_state" SET "latest_summary_message_id" = ${v.summaryId}, "revision" = ${v.revision}`);

export interface SummaryCommitDeps {
  db: AgentDb;
  history: History;
  profile: AgentProfile;
  jobs: CompactionJobs;
  now(): number;
  /** Test seam: throws at the named point while armed (inside the commit's transaction, after the summary's append). */
  fault?(point: "compaction.afterSummaryAppend"): void;
}

/** Lands a produced summary: the message, its span links, the job's `done`, then the thread and agent pointers. */
export class SummaryCommitter {
  /** The commit's statements (a summary lands every few appends while a thread grows; issue 12 §8). */
  private readonly summaryById;
  private readonly insertSummary;
  private readonly advancePointer;
  private readonly condense;
  private readonly movePointer;

  constructor(private readonly deps: SummaryCommitDeps) {
    const { db } = deps;
    this.summaryById = SUMMARY_BY_ID(db);
    this.insertSummary = INSERT_SUMMARY(db);
    this.advancePointer = ADVANCE_POINTER(db);
    this.condense = CONDENSE(db);
    this.movePointer = MOVE_POINTER(db);
  }

  /**
   * One transaction: the summary message (deterministic id), its span links, the job's `done`, then
   * the pointers — which therefore move only once the summary is committed, and only forwards. A
   * second commit under the same id with other content is kept out and recorded as a diagnostic.
   */
  commit(job: JobRow, summary: SummaryText): SummaryCommitResolution {
    const span: CompactionSpan = { ...job };
    const commit = buildSummaryCommit(span, summary.summarizerContractVersion, summary.text);
    return this.transact(job, summary, commit);
  }

  private transact(job: JobRow, summary: SummaryText, commit: ReturnType<typeof buildSummaryCommit>): SummaryCommitResolution {
    const db = this.deps.db;
    return db.transaction(() => {
      const existing = this.summaryById.get({ id: commit.summaryId });
      const resolution = resolveSummaryCommit(existing ? { summaryId: existing.messageId, summaryContentHash: existing.summaryContentHash } : null, commit);
      if (resolution.action === "divergent_duplicate") {
        db.insert(schema.memoryDiagnostics).values({ code: resolution.diagnostic.code, summaryId: commit.summaryId, detail: { ...resolution.diagnostic, jobId: job.id, summarizer: summary.summarizer }, createdAt: nowIso() }).run();
      }
      if (resolution.action === "insert") {
        const threadId = job.threadId;
        const metadata = {
          summaryDepth: job.summaryDepth,
          summaryStartMessageId: job.startMessageId,
          summaryEndMessageId: job.endMessageId,
          coveredFromSeq: job.coveredFromSeq,
          coveredThroughSeq: job.coveredThroughSeq,
          summaryContentHash: commit.summaryContentHash,
          summarizerContractVersion: commit.summarizerContractVersion,
          summarizer: summary.summarizer,
          summarizerReason: summary.reason,
        };
        // The span is the summaries row's (inserted below, same transaction): stored once, there (issue 12 §6).
        const span = [job.summaryDepth, job.startMessageId, job.endMessageId, job.coveredFromSeq, job.coveredThroughSeq, commit.summaryContentHash, commit.summarizerContractVersion];
        const storedMetadata = leanSummaryMetadata(metadata, span) ?? undefined;
        // The append reports the row's seq (a replayed id: the stored row's), so no read back by id.
        // Its message.appended frame leaves once this transaction commits (events/event-log.ts), never after a rollback.
        const { seq } = this.deps.history.append({ id: commit.summaryId, threadId, kind: "summary", text: commit.text, metadata, storedMetadata });
        this.deps.fault?.("compaction.afterSummaryAppend");
        this.insertSummary.run({
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
          createdAt: nowIso(),
        });
        if (job.summaryDepth > 0) this.condense.all({ summaryId: commit.summaryId, depth: job.summaryDepth - 1, startSeq: job.startSeq, endSeq: job.endSeq });
      }
      const keptId = commit.summaryId;
      const stored = this.deps.jobs.get(job.id);
      if (stored?.status === "running") this.deps.jobs.transition(stored, { type: "commit", now: this.deps.now() }, { summaryMessageId: keptId, summarizer: summary.summarizer });
      if (resolution.action !== "divergent_duplicate") this.advancePointers(job, keptId);
      return resolution;
    });
  }

  /** Moves the thread's pointer (depth 0) and the agent's; returns the thread's new pointer, null when it did not move. */
  private advancePointers(job: JobRow, summaryMessageId: string): number | null {
    const through = job.summaryDepth === 0 ? (this.advancePointer.get({ threadId: job.threadId, through: job.coveredThroughSeq, summaryId: summaryMessageId, updatedAt: nowIso() })?.through ?? null) : null;
    const state = this.deps.profile.state();
    if (!state) return through;
    const currentRow = state.latestSummaryMessageId ? this.summaryById.get({ id: state.latestSummaryMessageId }) : undefined;
    const current: SummaryPointer | null = currentRow ? { messageId: currentRow.messageId, summaryDepth: currentRow.summaryDepth, coveredThroughSeq: currentRow.coveredThroughSeq } : null;
    const advance = advancePointer(current, { messageId: summaryMessageId, summaryDepth: job.summaryDepth, coveredThroughSeq: job.coveredThroughSeq });
    if (advance.moved) {
      this.movePointer.all({ summaryId: advance.pointer.messageId, revision: state.revision + 1 });
    }
    return through;
  }
}
