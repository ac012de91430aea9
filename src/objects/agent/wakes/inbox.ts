import { and, asc, eq, ne, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { Run, RunStatus } from "../../../schema/agents/runs";
import { TERMINAL_RUN_STATUSES } from "../../../schema/agents/runs";
import type { WakeJob } from "../../../schema/agents/wake";
import { canonicalJson } from "../../../core/ids/hash";
import { nowIso } from "../../shared/sqlite";
import { keysetPage } from "../../shared/keyset";
import type { EventLog } from "../events";
import { RUN_TRACE_ROWS, traceEntriesOf, toRun, endingTrace, isFolded, storedRunTime, memoryCopyVerified, MemoryCopyStale, type TraceEntry } from "../rows";
import type { AgentDb } from "../types";
import { columnPlaceholder as slot } from "../../shared/statements/column-placeholder";
import { onRollback, syncTransaction } from "../../shared/statements/sync-transaction";
import { leanSite, writeSite } from "../../shared/statements/statement-sites";

// The inbox's statements, built once per isolate (objects/shared/statements/statement-sites.ts, session 11).
const ph = sql.placeholder;
const r = schema.runs;
const w = schema.wakeInbox;
const t = schema.runTrace;
const byRunKey = () => eq(r.runKey, ph("runKey"));
// Each ready row also carries how many wakes the inbox holds (parked ones included), read in the same statement:
// the inbox keeps it (`held`) so the turn's questions that the count answers need no read (issue 12 §8, session 12).
const READY = leanSite("inbox.ready", (db: AgentDb) =>
  db
    .select({ inbox: w, run: r, held: sql<number>`(SELECT count(*) FROM ${w})` })
    .from(w)
    .innerJoin(r, eq(r.runKey, w.runKey))
    .where(ne(r.status, "waiting"))
    .orderBy(asc(w.seq))
    .limit(ph("limit"))
    .prepare(),
);
const RUN = leanSite("inbox.run", (db: AgentDb) => db.select().from(r).where(byRunKey()).prepare());
const UNSETTLED = leanSite("inbox.unsettled", (db: AgentDb) =>
  db
    .select({ runKey: w.runKey })
    .from(w)
    .where(and(eq(w.threadId, ph("threadId")), ne(w.runKey, ph("except"))))
    .orderBy(asc(w.seq))
    .prepare(),
);
const INTERRUPT = leanSite("inbox.interrupt", (db: AgentDb) => db.select({ input: w.input }).from(w).where(eq(w.runKey, ph("runKey"))).prepare());
/** The turn's writes, with placeholders (issue 12 §8, session 11: drizzle built each on every call). */
const INSERT_RUN = leanSite("inbox.insertRun", (db: AgentDb) =>
  db
    .insert(r)
    .values({ runKey: ph("runKey"), reason: ph("reason"), threadId: ph("threadId"), status: "queued", attempt: 0, enqueuedAt: ph("now"), trace: {} })
    .onConflictDoNothing()
    .returning()
    .prepare(),
);
// Both inserts return the rows as stored: an inbox known to be empty then answers its next ready read from them.
const INSERT_WAKE = leanSite("inbox.insertWake", (db: AgentDb) =>
  db.insert(w).values({ runKey: ph("runKey"), reason: ph("reason"), threadId: ph("threadId"), authority: ph("authority"), input: ph("input"), enqueuedAt: ph("now") }).returning().prepare(),
);
const RUNNING = leanSite("inbox.running", (db: AgentDb) => db.update(r).set({ status: "running", attempt: slot<number>("attempt"), startedAt: slot<string>("startedAt") }).where(byRunKey()).returning().prepare());
const end = () => ({ status: slot<string>("status"), endedAt: slot<string>("endedAt"), errorCode: slot<string | null>("errorCode") });
const END = leanSite("inbox.end", (db: AgentDb) => db.update(r).set(end()).where(byRunKey()).returning().prepare());
const END_WITH_TRACE = leanSite("inbox.endWithTrace", (db: AgentDb) => db.update(r).set({ ...end(), trace: slot<Record<string, unknown>>("trace") }).where(byRunKey()).returning().prepare());
const DELETE_TRACE_ROWS = writeSite("inbox.deleteTraceRows", (db: AgentDb) => db.delete(t).where(eq(t.runKey, ph("runKey"))).prepare());
/** Returns the deleted wake, so the kept count moves only when a row went. */
const DELETE_WAKE = leanSite("inbox.deleteWake", (db: AgentDb) => db.delete(w).where(eq(w.runKey, ph("runKey"))).returning({ seq: w.seq }).prepare());

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
  /** Reads every turn makes several times (admission, drain, each step), built once (issue 12 §8). */
  private readonly readyQuery;
  private readonly runQuery;
  private readonly interruptQuery;
  private readonly traceRowsQuery;
  private readonly unsettledQuery;
  /** The turn's writes, built once with placeholders (issue 12 §8, session 11: drizzle built each on every call). */
  private readonly insertRun;
  private readonly insertWake;
  private readonly runningUpdate;
  /** The run's end, with and without a new trace: the stored trace is left as it is when there is none to write. */
  private readonly endUpdate;
  private readonly endUpdateWithTrace;
  private readonly deleteTraceRows;
  private readonly deleteWake;

  constructor(
    private readonly db: AgentDb,
    private readonly events: EventLog,
  ) {
    // A caller's transaction that throws undoes an enqueue made inside it: the count and the fresh wake go with it.
    onRollback(db, () => this.forgetCount());
    this.readyQuery = READY.bind(db);
    this.runQuery = RUN.bind(db);
    this.traceRowsQuery = RUN_TRACE_ROWS.bind(db);
    this.unsettledQuery = UNSETTLED.bind(db);
    this.interruptQuery = INTERRUPT.bind(db);
    this.insertRun = INSERT_RUN.bind(db);
    this.insertWake = INSERT_WAKE.bind(db);
    this.runningUpdate = RUNNING.bind(db);
    this.endUpdate = END.bind(db);
    this.endUpdateWithTrace = END_WITH_TRACE.bind(db);
    this.deleteTraceRows = DELETE_TRACE_ROWS.bind(db);
    this.deleteWake = DELETE_WAKE.bind(db);
  }

  /**
   * How many wakes the inbox holds (parked ones included) as last read, moved by this object's own deletes; null when
   * not known (the next ready read learns it). Answers, without a read, the questions of a turn whose inbox holds
   * nothing but its own wake (issue 12 §8, session 12): no other wake on the thread at admission (`unsettledOn`), no
   * companion to coalesce or merge (`pendingBeside`), nothing left after the run (`nextWithRun`). Exact:
   *   - every ready read sets it from the count it read in the same statement;
   *   - the activation's read sets it to 0 when the inbox holds no wake (`knownEmpty`);
   *   - an insert makes it unknown (`enqueue`), or one more than a known 0 (session 16): a transaction that throws
   *     makes it unknown again (`onRollback`), so an insert it undid cannot leave it high;
   *   - a delete lowers it only when its RETURNING row says a wake went (`finishWithTrace`, not run inside another
   *     transaction: its own commits or throws before the count moves);
   *   - an erasure, or a test writing `wake_inbox` rows itself, calls `forget`.
   * `requestInterrupt` changes a wake's input, not the inbox's rows.
   */
  private held: number | null = null;

  /**
   * The wake this object enqueued into an inbox known to hold nothing else, with its run, as the inserts returned them
   * (issue 12 §7, session 16): the drain's first ready read — a join, a count and a sort, on a cold wake the costliest
   * statement the inbox prepares — is answered from them, and so is the forwarder's `holding` question before it. Kept
   * until any write to a wake or a run here, or the count, drops it. Test deployments compare it with the read
   * (`memoryCopyVerified`).
   */
  private fresh: ReadyRow | null = null;

  /** The activation read that the inbox holds no wake, parked ones included (nothing has written it since). */
  knownEmpty(): void {
    if (this.held === null) this.held = 0;
  }

  private forgetCount(): void {
    this.held = null;
    this.fresh = null;
  }

  enqueue(job: Pick<WakeJob, "runKey" | "reason" | "threadId" | "authority" | "input">): EnqueueOutcome {
    const now = nowIso();
    const heldBefore = this.held;
    this.forgetCount();
    // The run row's key decides: a known runKey inserts nothing (one statement instead of a read first; issue 12 §8).
    const inserted = syncTransaction(this.db, (): ReadyRow | null => {
      const run = this.insertRun.get({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, now });
      if (!run) return null;
      const wake = this.insertWake.get({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, authority: job.authority, input: job.input, now })!;
      return { item: inboxItem(wake), run };
    });
    if (!inserted) return { status: "duplicate", runKey: job.runKey, runStatus: this.getRun(job.runKey)!.status };
    if (heldBefore === 0) {
      this.held = 1;
      this.fresh = inserted;
    }
    this.events.append("wake.enqueued", job.runKey, { runKey: job.runKey, reason: job.reason, threadId: job.threadId });
    return { status: "accepted", runKey: job.runKey, runStatus: "queued" };
  }

  /** The oldest waiting wake (FIFO per agent). */
  next(): InboxItem | null {
    return this.pending(1)[0] ?? null;
  }

  /** `next()` and its run, read in the same statement (session 11: the drain read the run by key right after). */
  nextWithRun(): { item: InboxItem; run: Run } | null {
    const [first] = this.ready(1);
    return first ? { item: first.item, run: toRun(first.run) } : null;
  }

  /**
   * `pending(limit)` for a run whose own wake is in the inbox, when the caller ignores that wake (the run loop's
   * companions and merged turns): none is read while the inbox is known to hold that one wake alone.
   */
  pendingBeside(limit: number): InboxItem[] {
    return this.held !== null && this.held <= 1 ? [] : this.pending(limit);
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
    // Reads change nothing: the fresh wake answers every ready read until a write drops it (the drain's `markRunning`).
    const fresh = this.held === 1 ? this.fresh : null;
    if (this.held === 0 || limit <= 0) return [];
    let rows: (ReadyRow & { held: number })[];
    if (fresh) {
      rows = [{ ...fresh, held: 1 }];
      if (memoryCopyVerified()) {
        const read = this.readyRows(limit);
        if (canonicalJson(read) !== canonicalJson(rows)) throw new MemoryCopyStale("fresh wake", rows, read);
      }
    } else {
      rows = this.readyRows(limit);
    }
    // No row: nothing ready, but parked wakes may be there; the count came with the rows only.
    if (rows.length > 0) this.held = rows[0]!.held;
    const ready: ReadyRow[] = [];
    for (const { item, run } of rows) {
      if (ready.length === limit) break;
      if (!this.awaitsUnsettled(item)) ready.push({ item, run });
    }
    return ready;
  }

  private readyRows(limit: number): (ReadyRow & { held: number })[] {
    return this.readyQuery.all({ limit: limit + BLOCKED_SLACK }).map(({ inbox, run, held }) => ({ item: inboxItem(inbox), run, held }));
  }

  /** Runs not yet terminal on `threadId` (their wakes are still in the inbox), oldest first; `except` left out. */
  unsettledOn(threadId: string, except: string): string[] {
    if (this.held === 0) return [];
    return this.unsettledQuery.all({ threadId, except }).map((row) => row.runKey);
  }

  /** Double texting `interrupt`: `runKey` stops at its next step boundary; `by` is the interrupting turn. First request wins. */
  requestInterrupt(runKey: string, by: string): boolean {
    const row = this.db.select({ input: schema.wakeInbox.input }).from(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, runKey)).get();
    if (!row || typeof row.input.interruptedBy === "string") return false;
    this.fresh = null;
    this.db.update(schema.wakeInbox).set({ input: { ...row.input, interruptedBy: by } }).where(eq(schema.wakeInbox.runKey, runKey)).run();
    this.marks.set(runKey, by);
    return true;
  }

  /**
   * Marks written by this object since it started (`requestInterrupt` is the only writer of `interruptedBy`), until
   * the run's wake is finished: with the input a wake was read with, they say whether it is marked without a read.
   */
  private readonly marks = new Map<string, string>();

  /**
   * The turn that interrupted `runKey`, while the run is not yet terminal; null when none did. `item`: the wake as
   * read from the inbox — its input holds any mark written before, `marks` any written since (issue 12 §8: the run
   * loop asks at every step boundary).
   */
  interruptOf(runKey: string, item?: Pick<InboxItem, "runKey" | "input">): string | null {
    const marked = this.marks.get(runKey);
    if (marked !== undefined) return marked;
    if (item?.runKey === runKey) return typeof item.input.interruptedBy === "string" ? item.input.interruptedBy : null;
    const row = this.interruptQuery.get({ runKey });
    return typeof row?.input.interruptedBy === "string" ? row.input.interruptedBy : null;
  }

  private awaitsUnsettled(item: InboxItem): boolean {
    const awaits = item.input.awaits;
    if (!Array.isArray(awaits) || awaits.length === 0) return false;
    return awaits.some((runKey) => typeof runKey === "string" && this.db.select({ seq: schema.wakeInbox.seq }).from(schema.wakeInbox).where(eq(schema.wakeInbox.runKey, runKey)).get() !== undefined);
  }

  /** Parks a run until its tool sagas report back (`unpark`). */
  park(runKey: string): void {
    this.fresh = null;
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
    this.fresh = null;
    this.db.update(schema.runs).set({ status: "ready" }).where(eq(schema.runs.runKey, runKey)).run();
    return true;
  }

  /** Wakes not yet terminal, parked ones included. */
  pendingCount(): number {
    this.held = this.db.select({ seq: schema.wakeInbox.seq }).from(schema.wakeInbox).all().length;
    return this.held;
  }

  /** No wake is left, parked ones included: the kept count when known, else `pendingCount`. */
  isEmpty(): boolean {
    return (this.held ?? this.pendingCount()) === 0;
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
    this.fresh = null;
    const row = this.runningUpdate.get({ runKey: run.runKey, attempt: run.attempt + (options.countAttempt ? 1 : 0), startedAt: storedRunTime(run.startedAt ?? nowIso(), run.enqueuedAt) });
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
    this.fresh = null;
    let went = false;
    const ended = syncTransaction(this.db, () => {
      const row = this.runQuery.get({ runKey });
      const rows = this.traceRowsQuery.all({ runKey });
      const traceRows = traceEntriesOf(row, rows);
      const trace = row ? endingTrace(row, fields.trace, rows) : fields.trace;
      const endedAt = nowIso();
      const end = { runKey, status, endedAt: row ? storedRunTime(endedAt, row.enqueuedAt) : endedAt, errorCode: fields.errorCode ?? null };
      const ended = trace ? this.endUpdateWithTrace.get({ ...end, trace }) : this.endUpdate.get(end);
      if (trace && isFolded(trace)) this.deleteTraceRows.run({ runKey });
      went = this.deleteWake.get({ runKey }) !== undefined;
      this.marks.delete(runKey);
      return { run: toRun(ended!), traceRows };
    });
    // Committed (or part of the caller's stretch of work): the wake is gone.
    if (went && this.held !== null) this.held = this.held > 0 ? this.held - 1 : null;
    return ended;
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
      .values({ runKey: job.runKey, reason: job.reason, threadId: job.threadId, status: "failed_terminal", attempt: 0, enqueuedAt: now, endedAt: storedRunTime(now, now), errorCode, trace: { reason: job.reason, deadLettered: true } })
      .run();
    const run = this.getRun(job.runKey)!;
    this.events.append("run.failed", job.runKey, { runKey: job.runKey, status: run.status, errorCode, run });
    return { settled: true, run };
  }

  /** The storage was erased: marks of runs that are gone are dropped. */
  forget(): void {
    this.marks.clear();
    this.forgetCount();
  }

  getRun(runKey: string): Run | null {
    const row = this.runQuery.get({ runKey });
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
