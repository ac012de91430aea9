import { asc, gt, sql } from "drizzle-orm";
import { isTenantStreamEvent } from "../../../core/egress/outbound-delivery";
import * as schema from "../../../db/agent-schema";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, ForwardedAgentEvent, RunOutcome, RunReport } from "../../../schema/contracts";
import type { AgentEvent } from "../../../schema/agents/runs";
import type { Agent } from "../../../schema/agents/agents";
import { restoreDoCalls, takeDoCalls } from "../../shared/call-meter";
import type { AgentDb } from "../types";
import { counters } from "../../../db/common-schema";
import { counterStatements } from "../../shared/counters";
import type { RecentAppends } from "./recent-appends";

/** Where forwarding stands: the highest agent event seq the tenant has acknowledged (in the DO's key/JSON table). */
const CURSOR_KEY = "tenant-stream:forwarded-seq";
/** The report parts not yet acknowledged (same table): kept until the tenant answered, so a crash loses none. */
const PENDING_KEY = "tenant-report:pending";

interface PendingReport {
  agent: RunReport["agent"];
  activities: AgentRunActivity[];
  outcomes: RunOutcome[];
  /** The number the next part gets; the tenant skips parts numbered at or below the last it recorded. */
  nextSeq: number;
}
const BATCH = 200;
/** The events after the cursor, a batch at a time (prepared once per object). */
const EVENTS_AFTER = (db: AgentDb) =>
  db.select().from(schema.events).where(gt(schema.events.seq, sql.placeholder("after"))).orderBy(asc(schema.events.seq)).limit(BATCH).prepare();
/**
 * The cursor and the pending parts in one upsert (a run's end writes both when the previous answer's cursor rides with
 * its parts: issue 12 §8, session 12); the same rows and values as the counter write of each.
 */
const WRITE_BOTH = (db: AgentDb) =>
  db
    .insert(counters)
    .values([
      { key: sql.placeholder("cursorKey"), state: sql.placeholder("cursor") },
      { key: sql.placeholder("pendingKey"), state: sql.placeholder("pending") },
    ])
    .onConflictDoUpdate({ target: counters.key, set: { state: sql`excluded.${sql.identifier(counters.state.name)}` } })
    .prepare();
/** The stream-visible events of a batch, as the tenant takes them. */
function forwarded(events: readonly Pick<AgentEvent, "seq" | "type" | "runKey" | "data" | "createdAt">[]): ForwardedAgentEvent[] {
  return events.filter((event) => isTenantStreamEvent(event.type)).map((event) => ({ seq: event.seq, type: event.type, runKey: event.runKey, data: event.data, createdAt: event.createdAt }));
}

export interface ForwarderDeps {
  db: AgentDb;
  agentId: () => string;
  tenantId: () => string;
  /** One RPC per batch to the TenantDO, `reportRun` (events deduplicated there by `(agentId, seq)`). */
  send: (agentId: string, report: RunReport) => Promise<Result<{ recorded: number; snapshotVersion: number }>>;
  waitUntil: (work: Promise<unknown>) => void;
  /** True while a run is under way or ready to start: its events wait for the report at its end. */
  holding: () => boolean;
  /** The tenant's snapshot version, as the report's answer carried it. */
  onSnapshotVersion: (version: number) => void;
  /** Test seam (VIGIL_FAULTS only): true resets the object right there, before a report leaves or before its answer is kept, as a crash would. */
  cut: (point: "agent.report.beforeSend" | "agent.report.beforeAck") => boolean;
  /** Stored rows → events as appended (stored events refer to messages and runs; ./event-refs.ts). */
  hydrate: (rows: ReadonlyArray<typeof schema.events.$inferSelect>) => AgentEvent[];
  /**
   * This instance's appends (./recent-appends.ts): every stored event after a seq when it holds them all, whether an
   * event came from an earlier instance, and the tenant's acknowledgement through a seq (what it kept of those goes).
   */
  appends: Pick<RecentAppends, "after" | "appendedEarlier" | "firstAppendAfter" | "dropThrough">;
}

/**
 * Forwards the agent's persisted events to the tenant-wide log (SPEC §8) — cheaply and durably
 * enough: appends only schedule a flush; a flush (single-flight, on a macrotask, so a burst of
 * appends travels as one RPC) sends everything after a persisted cursor and advances the cursor
 * only once the tenant answered. A failed or interrupted flush is retried by the next append or
 * the next activation, and the tenant's `(agentId, seq)` dedupe makes a re-sent batch harmless:
 * at-least-once in transport, exactly-once in the tenant log.
 *
 * Issue 12 §2: while a run is under way (or ready to start) nothing is sent; the run's end sends its
 * events together with its activity notifications, its outcome and the DO calls counted in this
 * isolate — one `reportRun` call per run. Activities and outcomes are stored until the tenant answered
 * (a crash between a run's end and its report would otherwise lose its subscribers' wakes and its
 * metrics). Each part is numbered, and the tenant records a part once: a report re-sent because the
 * agent crashed before it saw the answer adds nothing.
 */
export class EventForwarder {
  private flushing: Promise<void> | null = null;
  private again = false;
  /** A run ended: the next flush goes out even if another run is about to start. */
  private forced = false;
  /** A flush is scheduled and has not started yet (it will read everything after the cursor). */
  private waiting = false;
  /** The last flush left something unsent: it failed, or a run held it back. */
  private leftUnsent = false;
  /** Every run's end reads and writes the cursor and the pending row (the object's counter statements), and reads the events after the cursor: built once (issue 12 §8). */
  private readonly counters;
  private readonly eventsAfterQuery;
  private readonly writeBoth;

  constructor(private readonly deps: ForwarderDeps) {
    this.counters = counterStatements(deps.db);
    this.eventsAfterQuery = EVENTS_AFTER(deps.db);
    this.writeBoth = WRITE_BOTH(deps.db);
  }

  /** Called for every persisted event; only stream-visible types cause a flush, and none while a run holds them for its report. */
  noteAppended(type: string): void {
    // A flush already scheduled and not yet started checks `holding` itself and sends everything after the
    // cursor, this event included: no need to ask again (`holding` reads the inbox; issue 12 §8).
    if (isTenantStreamEvent(type) && !this.waiting && !this.deps.holding()) this.schedule();
  }

  /** A completed run's notifications for subscribers (sent with the run's report). */
  addActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): void {
    const pending = this.pending();
    this.keepPending({ ...pending, agent, activities: [...pending.activities, { ...activity, seq: pending.nextSeq }], nextSeq: pending.nextSeq + 1 });
  }

  /** A terminal run's outcome for the tenant's metrics (sent with the run's report). */
  addOutcome(outcome: RunOutcome): void {
    const pending = this.pending();
    this.keepPending({ ...pending, outcomes: [...pending.outcomes, { ...outcome, seq: pending.nextSeq }], nextSeq: pending.nextSeq + 1 });
  }

  /**
   * Drops the cursor and the parts kept in memory (the parts written first if their write is due; a cursor not yet
   * written is dropped, since the caller wrote the cursor row itself): the next use reads them. For the bench's and
   * tests' aged logs, which set the cursor row past this class.
   */
  forget(): void {
    this.cursorDirty = false;
    this.writePending();
    this.drop();
  }

  /** Every row is gone (erasure): what is kept goes unwritten, so nothing of the erased agent is written back. */
  discard(): void {
    this.dirty = false;
    this.drop();
  }

  private drop(): void {
    this.kept = null;
    this.cursorDirty = false;
  }

  /** The highest event seq the tenant recorded, as a wake it queued said (`tenantRecorded`); applied by the next flush. */
  private claimed = 0;

  /**
   * The tenant had recorded this agent's events through `seq` when it queued a wake (WakeJob.recordedThrough). The next
   * flush moves the cursor there when `seq` is below this instance's first append — every event up to it is stored,
   * from an earlier instance — so a cold agent's report starts after what the tenant holds: no earlier event is read
   * back or re-sent by reference (issue 12 §7, session 16). A claim at or past the first append (a log erased and
   * started over since) is not applied.
   */
  tenantRecorded(seq: number): void {
    this.claimed = Math.max(this.claimed, seq);
  }

  private applyClaim(): void {
    const claimed = this.claimed;
    // Below the first append: no append of this instance is at or before it, so nothing kept is acknowledged by it.
    if (claimed <= this.cursor() || !this.deps.appends.firstAppendAfter(claimed)) return;
    this.claimed = 0;
    this.setCursor(claimed);
  }

  /** The highest event seq the tenant acknowledged, as this class knows it (its row may lag: see `setCursor`). */
  forwardedThrough(): number {
    return this.cursor();
  }

  /** No flush is under way or scheduled and every kept part is written (tests wait for a run's report with it). */
  get idle(): boolean {
    return this.flushing === null && !this.dirty;
  }

  /**
   * Resolves once no flush is scheduled or under way: true when the tenant acknowledged everything sent and no part
   * waits for it (the wake consumer's delivery decides on it whether the watchdog must cover the report).
   */
  async settled(): Promise<boolean> {
    while (this.flushing) await this.flushing;
    const { activities, outcomes } = this.pending();
    return !this.leftUnsent && activities.length === 0 && outcomes.length === 0;
  }

  /** A run settled: its report goes out now. */
  runSettled(): void {
    this.forced = true;
    this.schedule();
  }

  schedule(): void {
    if (this.flushing) {
      this.again = true;
      return;
    }
    this.waiting = true;
    const flushing = new Promise((resolve) => setTimeout(resolve, 0))
      .then(async () => {
        this.waiting = false;
        this.leftUnsent = !this.forced && this.deps.holding();
        if (this.leftUnsent) return;
        this.forced = false;
        await this.flushAll();
      })
      .catch((error: unknown) => {
        this.leftUnsent = true;
        console.error(JSON.stringify({ level: "error", msg: "tenant event forwarding failed", agentId: this.deps.agentId(), error: String(error) }));
      })
      .finally(() => {
        this.waiting = false;
        this.flushing = null;
      });
    this.flushing = flushing;
    this.deps.waitUntil(flushing);
  }

  private async flushAll(): Promise<void> {
    do {
      this.again = false;
      await this.flushOnce();
    } while (this.again);
  }

  private async flushOnce(): Promise<void> {
    const agentId = this.deps.agentId();
    if (!agentId) return;
    this.applyClaim();
    const { events, lastSeq, full } = this.unsent(this.cursor());
    const pending = this.pending();
    const report: RunReport = { events, agent: pending.agent, activities: pending.activities, outcomes: pending.outcomes, calls: [] };
    if (events.length > 0 || report.activities.length > 0 || report.outcomes.length > 0) {
      const tenantId = this.deps.tenantId();
      report.calls = takeDoCalls(tenantId);
      if (this.deps.cut("agent.report.beforeSend")) {
        restoreDoCalls(tenantId, report.calls);
        this.leftUnsent = true;
        return;
      }
      const sent = await this.deps.send(agentId, report).catch((error: unknown) => ({ ok: false as const, code: String(error) }));
      if (!sent.ok) {
        // Nothing is lost by a refused or failed report: the events stay after the cursor, the rest stays pending.
        restoreDoCalls(tenantId, report.calls);
        throw new Error(`tenant refused the report: ${sent.code}`);
      }
      if (this.deps.cut("agent.report.beforeAck")) {
        this.leftUnsent = true;
        return;
      }
      // Only what was sent: a run that ended while the report was in flight keeps its parts for the next one.
      // Dropped in memory only: the stored row loses them with its next write (the next run's end). Until then a
      // restart re-sends them, which adds nothing — the tenant records each numbered part once, exactly as after a
      // crash between its answer and this line (run-report-durability's beforeAck case). One statement less a run.
      if (report.activities.length > 0 || report.outcomes.length > 0) {
        const now = this.pending();
        this.state().pending = { ...now, activities: now.activities.slice(report.activities.length), outcomes: now.outcomes.slice(report.outcomes.length) };
      }
      this.deps.onSnapshotVersion(sent.snapshotVersion);
    }
    // Only forward: the cursor may have moved on while the report was in flight.
    if (lastSeq !== null && lastSeq > this.cursor()) this.setCursor(lastSeq);
    if (lastSeq !== null) this.deps.appends.dropThrough(lastSeq);
    if (full) this.again = true;
  }

  /**
   * The stream events after `cursor` as appended, the seq of the last event stored after it (any type), and whether
   * a whole batch was read (more may follow). From this instance's own appends when it holds every one of them
   * (session 15), else read (a batch) and hydrated.
   */
  private unsent(cursor: number): { events: ForwardedAgentEvent[]; lastSeq: number | null; full: boolean } {
    const kept = this.deps.appends.after(cursor);
    const fromKept = kept && { events: forwarded(kept), lastSeq: kept[kept.length - 1]!.seq, full: false };
    if (fromKept) return fromKept;
    const rows = this.eventsAfterQuery.all({ after: cursor });
    const stream = rows.filter((row) => isTenantStreamEvent(row.type));
    // An earlier instance's appends (a report it sent before it stopped, its cursor not yet written): most likely
    // recorded already, so they go by reference and the tenant reads back only one it has not (session 15).
    const earlier = stream.filter((row) => this.deps.appends.appendedEarlier(row.seq));
    const mine = this.deps.hydrate(stream.filter((row) => !this.deps.appends.appendedEarlier(row.seq)));
    const references = earlier.map((row): ForwardedAgentEvent => ({ seq: row.seq, type: row.type, runKey: row.runKey, data: {}, createdAt: row.createdAt, byReference: true }));
    const events = [...references, ...forwarded(mine)].sort((a, b) => a.seq - b.seq);
    const read = { events, lastSeq: rows.length > 0 ? rows[rows.length - 1]!.seq : null, full: rows.length === BATCH };
    return read;
  }

  /**
   * The cursor and the pending parts, read once since activation and kept (issue 12 §8: every run's end read each
   * of them three times). Exact: this class is the only writer of both rows and writes through; `forget` drops them.
   */
  private kept: { cursor: number; pending: PendingReport } | null = null;
  /** The kept parts changed and are not written yet (their write is queued as a microtask). */
  private dirty = false;

  private state(): { cursor: number; pending: PendingReport } {
    if (!this.kept) {
      const seq = this.counters.read.get({ key: CURSOR_KEY })?.state.seq;
      const state = this.counters.read.get({ key: PENDING_KEY })?.state as Partial<PendingReport> | undefined;
      const pending = { agent: state?.agent ?? null, activities: state?.activities ?? [], outcomes: state?.outcomes ?? [], nextSeq: state?.nextSeq ?? 1 };
      this.kept = { cursor: typeof seq === "number" ? seq : 0, pending };
    }
    return this.kept;
  }

  private cursor(): number {
    return this.state().cursor;
  }

  private pending(): PendingReport {
    return this.state().pending;
  }

  /**
   * A run's end adds its outcome and then its activity in one synchronous stretch: both are written together by a
   * microtask queued here, which runs before anything else can (no I/O, no other request in between), so they are
   * as durable as one write each right away was, in one statement instead of two.
   */
  private keepPending(pending: PendingReport): void {
    this.state().pending = pending;
    if (this.dirty) return;
    this.dirty = true;
    queueMicrotask(() => this.writePending());
  }

  /** One row per agent, kept when empty: it holds the part numbering. A cursor not yet written goes with it. */
  private writePending(): void {
    if (this.dirty && this.kept && this.cursorDirty) {
      this.dirty = false;
      this.cursorDirty = false;
      this.writeBoth.run({ cursorKey: CURSOR_KEY, cursor: { seq: this.kept.cursor }, pendingKey: PENDING_KEY, pending: this.kept.pending });
      return;
    }
    this.writeCursor();
    if (!this.dirty || !this.kept) return;
    this.dirty = false;
    this.counters.write.run({ key: PENDING_KEY, state: this.kept.pending });
  }

  /** The cursor moved and its row has not (see `setCursor`). */
  private cursorDirty = false;

  /**
   * The tenant acknowledged up to `seq`. Its row is written by the next write this class makes anyway (the next run's
   * end, in that run's commit): a write of its own after the tenant's answer was a commit of its own on every run
   * (issue 12 §8). Until session 15 a timer wrote it after 1 s of quiet, which still cost every woken agent a second
   * commit. A restart before the write re-sends from the stored cursor, which adds nothing: the tenant skips every
   * event at or below the highest seq it recorded for the agent (`RunReports.record`) — and those events go by
   * reference (`unsent`), so the re-send reads no message or run back.
   */
  private setCursor(seq: number): void {
    this.state().cursor = seq;
    this.cursorDirty = true;
  }

  private writeCursor(): void {
    if (!this.cursorDirty || !this.kept) return;
    this.cursorDirty = false;
    this.counters.write.run({ key: CURSOR_KEY, state: { seq: this.kept.cursor } });
  }
}
