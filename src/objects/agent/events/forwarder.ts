import { eq, inArray } from "drizzle-orm";
import { isTenantStreamEvent } from "../../../core/egress/outbound-delivery";
import type { Result } from "../../../core/runtime/result";
import { counters } from "../../../db/common-schema";
import type { Agent } from "../../../schema/agents/agents";
import type { AgentRunActivity, ForwardedAgentEvent, RunOutcome, RunReport } from "../../../schema/contracts";
import { restoreDoCalls, takeDoCalls } from "../../shared/call-meter";
import type { AgentDb } from "../types";
import { hydrateEvents } from "./event-refs";
import { storedEventsAfter } from "./stored-events";

/** Counters key: the highest agent event seq the tenant has acknowledged. */
const CURSOR_KEY = "tenant-stream:forwarded-seq";
/** Counters key: the report parts the tenant has not acknowledged yet, and the number the next part gets. */
const PENDING_KEY = "tenant-report:pending";
/** Agent events read per report. */
const BATCH = 200;

interface PendingReport {
  agent: RunReport["agent"];
  activities: AgentRunActivity[];
  outcomes: RunOutcome[];
  /** The number the next part gets; the tenant records a part once (it skips numbers at or below its last). */
  nextSeq: number;
}

export interface ForwarderDeps {
  db: AgentDb;
  agentId: () => string;
  tenantId: () => string;
  /** One RPC per report to the TenantDO, `reportRun`. */
  send: (agentId: string, report: RunReport) => Promise<Result<{ recorded: number; snapshotVersion: number }>>;
  waitUntil: (work: Promise<unknown>) => void;
  /** True while a run is under way or ready to start: its events wait for the report at its end. */
  holding: () => boolean;
  /** The tenant's snapshot version, as the report's answer carried it. */
  onSnapshotVersion: (version: number) => void;
  /** Test seam (VIGIL_FAULTS only): true resets the object right there, as a crash would. */
  cut: (point: "agent.report.beforeSend" | "agent.report.beforeAck") => boolean;
}

/**
 * Forwards the agent's persisted events, with its runs' activity notifications and outcomes, to the tenant: one
 * `reportRun` call per run's end (nothing leaves while a run holds). Everything a report carries is read from SQLite —
 * the events after the stored cursor, the parts stored by the run's end in the run's own transaction — and the cursor
 * and the acknowledged parts are written in one transaction once the tenant answered. A crash anywhere re-sends from
 * what is stored; the tenant records each event seq and each numbered part once, so a re-sent report adds nothing.
 */
export class EventForwarder {
  private flushing: Promise<void> | null = null;
  private again = false;
  /** A run ended: the next flush goes out even if another run is about to start. */
  private forced = false;
  /** The last flush left something unsent: it failed, or a run held it back. */
  private leftUnsent = false;

  constructor(private readonly deps: ForwarderDeps) {}

  /** Called for every committed event; only stream-visible types cause a flush, and none while a run holds them. */
  noteAppended(type: string): void {
    if (isTenantStreamEvent(type) && !this.deps.holding()) this.schedule();
  }

  /** A completed run's notification for subscribers, stored in the caller's transaction (sent with the report). */
  addActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): void {
    const pending = this.pending();
    const activities = [...pending.activities, { ...activity, seq: pending.nextSeq }];
    this.writePending({ ...pending, agent, activities, nextSeq: pending.nextSeq + 1 });
  }

  /** A terminal run's outcome for the tenant's metrics, stored in the caller's transaction (sent with the report). */
  addOutcome(outcome: RunOutcome): void {
    const pending = this.pending();
    this.writePending({ ...pending, outcomes: [...pending.outcomes, { ...outcome, seq: pending.nextSeq }], nextSeq: pending.nextSeq + 1 });
  }

  /** The highest event seq the tenant acknowledged. */
  forwardedThrough(): number {
    const seq = this.read(CURSOR_KEY)?.seq;
    return typeof seq === "number" ? seq : 0;
  }

  /** No flush is under way or scheduled. */
  get idle(): boolean {
    return this.flushing === null;
  }

  /** Resolves once no flush is under way: true when the last flush sent everything and no part waits for the tenant. */
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

  /** A flush on the next macrotask (a burst of appends travels as one report); single-flight. */
  schedule(): void {
    if (this.flushing) {
      this.again = true;
      return;
    }
    const flushing = new Promise((resolve) => setTimeout(resolve, 0))
      .then(async () => {
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
    const { cursor, pending } = this.stored();
    const { events, lastSeq, full } = this.unsent(cursor);
    if (lastSeq === null && pending.activities.length === 0 && pending.outcomes.length === 0) return;
    const tenantId = this.deps.tenantId();
    const report: RunReport = { events, agent: pending.agent, activities: pending.activities, outcomes: pending.outcomes, calls: takeDoCalls(tenantId) };
    if (this.deps.cut("agent.report.beforeSend")) return this.interrupted(tenantId, report);
    const sent = await this.deps.send(agentId, report).catch((error: unknown) => ({ ok: false as const, code: String(error) }));
    if (!sent.ok) {
      restoreDoCalls(tenantId, report.calls);
      throw new Error(`tenant refused the report: ${sent.code}`);
    }
    if (this.deps.cut("agent.report.beforeAck")) return void (this.leftUnsent = true);
    this.acknowledge(lastSeq !== null && lastSeq > cursor ? lastSeq : null, report);
    this.deps.onSnapshotVersion(sent.snapshotVersion);
    if (full) this.again = true;
  }

  private interrupted(tenantId: string, report: RunReport): void {
    restoreDoCalls(tenantId, report.calls);
    this.leftUnsent = true;
  }

  /**
   * The tenant took the report: the cursor moves to its last event and the parts it carried go, in one transaction.
   * Parts added while it was in flight stay (they come after the sent ones). Only this single-flight flush moves the
   * cursor, so the value it read before sending is still the stored one.
   */
  private acknowledge(lastSeq: number | null, report: RunReport): void {
    this.deps.db.transaction(() => {
      if (lastSeq !== null) this.write(CURSOR_KEY, { seq: lastSeq });
      if (report.activities.length === 0 && report.outcomes.length === 0) return;
      const now = this.pending();
      this.writePending({ ...now, activities: now.activities.slice(report.activities.length), outcomes: now.outcomes.slice(report.outcomes.length) });
    });
  }

  /** The stream events after the cursor, the seq of the last event read (any type), and whether more may follow. */
  private unsent(cursor: number): { events: ForwardedAgentEvent[]; lastSeq: number | null; full: boolean } {
    const rows = storedEventsAfter(this.deps.db, cursor, BATCH);
    const stream = hydrateEvents(this.deps.db, this.deps.agentId(), rows.filter((row) => isTenantStreamEvent(row.type)));
    const events = stream.map(({ seq, type, runKey, data, createdAt }) => ({ seq, type, runKey, data, createdAt }));
    return { events, lastSeq: rows.length > 0 ? rows[rows.length - 1]!.seq : null, full: rows.length === BATCH };
  }

  /** The cursor and the pending parts, in one read. */
  private stored(): { cursor: number; pending: PendingReport } {
    const rows = this.deps.db.select().from(counters).where(inArray(counters.key, [CURSOR_KEY, PENDING_KEY])).all();
    const seq = rows.find((row) => row.key === CURSOR_KEY)?.state.seq;
    return { cursor: typeof seq === "number" ? seq : 0, pending: pendingOf(rows.find((row) => row.key === PENDING_KEY)?.state) };
  }

  private pending(): PendingReport {
    return pendingOf(this.read(PENDING_KEY));
  }

  /** One row per agent, kept when empty: it holds the part numbering. */
  private writePending(pending: PendingReport): void {
    this.write(PENDING_KEY, { ...pending });
  }

  private read(key: string): Record<string, unknown> | undefined {
    return this.deps.db.select({ state: counters.state }).from(counters).where(eq(counters.key, key)).get()?.state;
  }

  private write(key: string, state: Record<string, unknown>): void {
    this.deps.db.insert(counters).values({ key, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
  }
}

function pendingOf(stored: Record<string, unknown> | undefined): PendingReport {
  const state = stored as Partial<PendingReport> | undefined;
  return { agent: state?.agent ?? null, activities: state?.activities ?? [], outcomes: state?.outcomes ?? [], nextSeq: state?.nextSeq ?? 1 };
}
