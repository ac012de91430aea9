import { and, asc, count, eq, ne, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Run, RunStatus } from "../../../schema/agents/runs";
import { TERMINAL_RUN_STATUSES } from "../../../schema/agents/runs";
import type { WakeJob } from "../../../schema/agents/wake";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { runTraceRows, traceEntriesOf, toRun, endingTrace, isFolded, type TraceEntry } from "../rows";
import type { AgentDb } from "../types";

const ph = sql.placeholder;
const r = schema.runs;
const w = schema.wakeInbox;
const t = schema.runTrace;
const byRunKey = () => eq(r.runKey, ph("runKey"));

/** The inbox's statements, prepared once per object (drizzle's `prepare`): every turn runs them several times. */
function statements(db: AgentDb) {
  const end = { status: sql`${ph("status")}`, endedAt: sql`${ph("endedAt")}`, errorCode: sql`${ph("errorCode")}` };
  return {
    ready: db.select({ inbox: w, run: r }).from(w).innerJoin(r, eq(r.runKey, w.runKey)).where(ne(r.status, "waiting")).orderBy(asc(w.seq)).limit(ph("limit")).prepare(),
    run: db.select().from(r).where(byRunKey()).prepare(),
    count: db.select({ n: count() }).from(w).prepare(),
    traceRows: runTraceRows(db),
    unsettled: db.select({ runKey: w.runKey }).from(w).where(and(eq(w.threadId, ph("threadId")), ne(w.runKey, ph("except")))).orderBy(asc(w.seq)).prepare(),
    interrupt: db.select({ input: w.input }).from(w).where(eq(w.runKey, ph("runKey"))).prepare(),
    insertRun: db
      .insert(r)
      .values({ runKey: ph("runKey"), reason: ph("reason"), threadId: ph("threadId"), status: "queued", attempt: 0, enqueuedAt: ph("now"), trace: {} })
      .onConflictDoNothing()
      .returning({ runKey: r.runKey })
      .prepare(),
    insertWake: db.insert(w).values({ runKey: ph("runKey"), reason: ph("reason"), threadId: ph("threadId"), authority: ph("authority"), input: ph("input"), enqueuedAt: ph("now") }).prepare(),
    running: db.update(r).set({ status: "running", attempt: sql`${ph("attempt")}`, startedAt: sql`${ph("startedAt")}` }).where(byRunKey()).returning().prepare(),
    end: db.update(r).set(end).where(byRunKey()).returning().prepare(),
    deleteTraceRows: db.delete(t).where(eq(t.runKey, ph("runKey"))).prepare(),
    deleteWake: db.delete(w).where(eq(w.runKey, ph("runKey"))).prepare(),
  };
}

/** Interrupting turns waiting for their interrupted runs to settle are skipped over; this many at most per read. */
const BLOCKED_SLACK = 20;

export type EnqueueOutcome = { status: "accepted" | "duplicate"; runKey: string; runStatus: RunStatus };

type ReadyRow = { item: InboxItem; run: typeof schema.runs.$inferSelect };

export interface InboxItem {
  seq: number;
  runKey: string;
  reason: WakeJob["reason"];
  threadId: string;
  authority: WakeJob["authority"];
  input: Record<string, unknown>;
}

/**
 * The persisted wake inbox and the wake-run log. A runKey enters at most once: a second enqueue of
 * the same key — whatever state its run is in — is acknowledged as a duplicate and dropped.
 */
export class WakeInbox {
  private readonly q;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
  ) {
    this.q = statements(db);
  }

  enqueue(job: Pick<WakeJob, "runKey" | "reason" | "threadId" | "authority" | "input">): EnqueueOutcome {
    const now = nowIso();
    // The run row's key decides: a known runKey inserts nothing (one statement instead of a read first).
    const inserted = this.db.transaction(() => {
      if (!this.q.insertRun.get({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, now })) return false;
      this.q.insertWake.run({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, authority: job.authority, input: job.input, now });
      return true;
    });
    if (!inserted) return { status: "duplicate", runKey: job.runKey, runStatus: this.getRun(job.runKey)!.status };
    this.events.append("wake.enqueued", job.runKey, { runKey: job.runKey, reason: job.reason, threadId: job.threadId });
    return { status: "accepted", runKey: job.runKey, runStatus: "queued" };
  }

  /** The oldest waiting wake (FIFO per agent). */
  next(): InboxItem | null {
    return this.pending(1)[0] ?? null;
  }

  /** `next()` and its run, read in the same statement. */
  nextWithRun(): { item: InboxItem; run: Run } | null {
    const [first] = this.ready(1);
    return first ? { item: first.item, run: toRun(first.run) } : null;
  }

  /**
   * Wakes ready to run, oldest first (bounded); runs parked on a saga are not ready, nor is an interrupting turn
   * whose interrupted runs have not settled yet (double texting: it runs with their messages in context).
   */
  pending(limit: number): InboxItem[] {
    return this.ready(limit).map(({ item }) => item);
  }

  /** `pending`, each wake with its run row (the ready read joins it anyway). */
  private ready(limit: number): ReadyRow[] {
    if (limit <= 0) return [];
    const ready: ReadyRow[] = [];
    for (const { inbox, run } of this.q.ready.all({ limit: limit + BLOCKED_SLACK })) {
      if (ready.length === limit) break;
      const item = inboxItem(inbox);
      if (!this.awaitsUnsettled(item)) ready.push({ item, run });
    }
    return ready;
  }

  /** Runs not yet terminal on `threadId` (their wakes are still in the inbox), oldest first; `except` left out. */
  unsettledOn(threadId: string, except: string): string[] {
    return this.q.unsettled.all({ threadId, except }).map((row) => row.runKey);
  }

  /** Double texting `interrupt`: `runKey` stops at its next step boundary; `by` is the interrupting turn. First request wins. */
  requestInterrupt(runKey: string, by: string): boolean {
    const row = this.db.select({ input: schema.wakeInbox.input }).from(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, runKey)).get();
    if (!row || typeof row.input.interruptedBy === "string") return false;
    this.db.update(schema.wakeInbox).set({ input: { ...row.input, interruptedBy: by } }).where(eq(schema.wakeInbox.runKey, runKey)).run();
    return true;
  }

  /** The turn that interrupted `runKey`, while the run is not yet terminal (its wake holds the mark); null when none did. */
  interruptOf(runKey: string): string | null {
    const row = this.q.interrupt.get({ runKey });
    return typeof row?.input.interruptedBy === "string" ? row.input.interruptedBy : null;
  }

  private awaitsUnsettled(item: InboxItem): boolean {
    const awaits = item.input.awaits;
    if (!Array.isArray(awaits) || awaits.length === 0) return false;
    return awaits.some((runKey) => typeof runKey === "string" && this.db.select({ seq: schema.wakeInbox.seq }).from(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, runKey)).get() !== undefined);
  }

  /** Parks a run until its tool sagas report back (`unpark`). */
  park(runKey: string): void {
    this.db.update(schema.runs).set({ status: "waiting" }).where(eq(schema.runs.runKey, runKey)).run();
  }

  /** Runs parked on a saga. */
  parkedRunKeys(): string[] {
    return this.db.select({ runKey: schema.runs.runKey }).from(schema.runs).where(eq(schema.runs.status, "waiting")).all().map((row) => row.runKey);
  }

  /** A parked run becomes ready to resume; a no-op for a run in any other state. */
  unpark(runKey: string): boolean {
    const run = this.getRun(runKey);
    if (run?.status !== "waiting") return false;
    this.db.update(schema.runs).set({ status: "ready" }).where(eq(schema.runs.runKey, runKey)).run();
    return true;
  }

  /** Wakes not yet terminal, parked ones included. */
  pendingCount(): number {
    return this.q.count.get()?.n ?? 0;
  }

  /** No wake is left, parked ones included. */
  isEmpty(): boolean {
    return this.pendingCount() === 0;
  }

  readyCount(): number {
    return this.pending(1).length;
  }

  /**
   * A resumption after a saga is not a new attempt; a restart after a crash is. `run`: the run as just read (or its
   * key, read here); the update returns the stored row, so the caller's copy costs no read after it (issue 12 §8).
   */
  markRunning(runOrKey: Run | string, options: { countAttempt: boolean } = { countAttempt: true }): Run {
    const run = typeof runOrKey === "string" ? this.getRun(runOrKey)! : runOrKey;
    const row = this.q.running.get({ runKey: run.runKey, attempt: run.attempt + (options.countAttempt ? 1 : 0), startedAt: run.startedAt ?? nowIso() });
    return toRun(row!);
  }

  /**
   * Ends a run in exactly one terminal status and removes its wake, atomically. Its trace is stored lean, and its
   * `run_trace` rows are folded into it and deleted in the same transaction (issue 12 §6; stored-trace.ts): readers
   * (RunTrace) read the folded rows and then any row written after the run ended.
   */
  finish(runKey: string, status: RunStatus, fields: { errorCode?: string | null; trace?: Record<string, unknown> } = {}): Run {
    return this.finishWithTrace(runKey, status, fields).run;
  }

  /**
   * `finish`, answering also every trace row of the run (`RunTrace.rows` as it reads after the end: the rows folded
   * before, then those read here to fold), so the run's end needs no second read of them (issue 12 §8). The update
   * returns the stored row: no read after it either.
   */
  finishWithTrace(runKey: string, status: RunStatus, fields: { errorCode?: string | null; trace?: Record<string, unknown> } = {}): { run: Run; traceRows: TraceEntry[] } {
    if (!TERMINAL_RUN_STATUSES.includes(status)) throw new Error(`finish: ${status} is not terminal`);
    return this.db.transaction(() => {
      const row = this.q.run.get({ runKey });
      const rows = this.q.traceRows.all({ runKey });
      const traceRows = traceEntriesOf(row, rows);
      const trace = row ? endingTrace(row, fields.trace, rows) : fields.trace;
      const end = { status, endedAt: nowIso(), errorCode: fields.errorCode ?? null };
      const ended = trace
        ? this.db.update(r).set({ ...end, trace }).where(eq(r.runKey, runKey)).returning().get()
        : this.q.end.get({ runKey, ...end });
      if (trace && isFolded(trace)) this.q.deleteTraceRows.run({ runKey });
      this.q.deleteWake.run({ runKey });
      return { run: toRun(ended!), traceRows };
    });
  }

  /**
   * A wake the queue gave up delivering (its dead-letter queue): the run is recorded as
   * `failed_terminal` with `errorCode`, so it is visible instead of silently missing. A runKey the
   * agent already knows was delivered after all (the failure came after the inbox write): untouched.
   */
  settleUndelivered(job: Pick<WakeJob, "runKey" | "reason" | "threadId" | "authority">, errorCode: string): { settled: boolean; run: Run } {
    const existing = this.getRun(job.runKey);
    if (existing) return { settled: false, run: existing };
    const now = nowIso();
    this.db
      .insert(schema.runs)
      .values({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, status: "failed_terminal", attempt: 0, enqueuedAt: now, endedAt: now, errorCode, trace: { reason: job.reason, deadLettered: true } })
      .run();
    const run = this.getRun(job.runKey)!;
    this.events.append("run.failed", job.runKey, { runKey: job.runKey, status: run.status, errorCode, run });
    return { settled: true, run };
  }

  getRun(runKey: string): Run | null {
    const row = this.q.run.get({ runKey });
    return row ? toRun(row) : null;
  }

  isTerminal(run: Run): boolean {
    return TERMINAL_RUN_STATUSES.includes(run.status);
  }

  /** Newest first, keyset-paginated on (enqueuedAt, runKey). */
  listRuns(limit: number, before?: { enqueuedAt: string; runKey: string }): { data: Run[]; last: { enqueuedAt: string; runKey: string } | null } {
    const r = schema.runs;
    const { rows, last } = keysetPage(this.db, { table: r, sort: r.enqueuedAt, tieBreak: r.runKey, order: "desc", limit, from: before && { c: before.enqueuedAt, i: before.runKey } });
    return { data: rows.map(toRun), last: last && { enqueuedAt: last.enqueuedAt, runKey: last.runKey } };
  }
}

/** A wake_inbox row as the inbox hands it out. */
function inboxItem(row: typeof schema.wakeInbox.$inferSelect): InboxItem {
  return { ...row, reason: row.reason as InboxItem["reason"], authority: row.authority as InboxItem["authority"] };
}
