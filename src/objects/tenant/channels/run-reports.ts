import { sql } from "drizzle-orm";
import type { Agent } from "../../../schema/agents/agents";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, DoCallCount, RunReport } from "../../../schema/contracts";
import { takeDoCalls } from "../../shared/call-meter";
import { counterStatements } from "../../shared/counters";
import type { EventFeed } from "./event-feed";
import { TenantMetrics } from "./metrics";
import type { TenantDb } from "../types";
import { handWritten } from "../../shared/sqlite";

/** How many agents' report numbering a tenant keeps in memory (./run-reports.ts `RunReports.kept`). */
const KEPT_AGENTS = 10_000;

/** How many numbering rows the first report after the object's start reads at once (./run-reports.ts `RunReports.load`). */
const LOADED_AGENTS = 2_000;

/** The highest report-part number and agent event seq recorded for an agent (tenant `counters`; removed when the agent is erased). */
export const reportedPartKey = (agentId: string) => `run-report:${agentId}`;

/**
 * Every agent's numbering row, up to `limit`, in one statement: the keys are `run-report:` + id, a range of the primary
 * key (`;` follows `:`). The two numbers are taken out in SQL, so no row's JSON is parsed in JavaScript.
 */
const READ_ALL = handWritten<{ key: string; seq: SqlStorageValue; events: SqlStorageValue }>((v) => sql`SELECT "key", "state" ->> '$.seq' AS "seq", "state" ->> '$.events' AS "events" FROM "counters" WHERE "key" >= 'run-report:' AND "key" < 'run-report;' LIMIT ${v.limit}`);

export interface RunReportsDeps {
  db: TenantDb;
  feed: EventFeed;
  metrics: TenantMetrics;
  /** agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  recordActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): void;
  /** Queues the wakes the recorded notification batches match (after they committed). */
  dispatch(): Promise<void>;
  /** True when a dispatch pass would find nothing new (see Dispatcher.nothingToDispatch); a batch just recorded makes it false. */
  nothingToDispatch(): boolean;
  snapshotVersion(): number;
  tenantId(): string;
}

/**
 * What the tenant learns from its agents' runs and counts for GET /v1/metrics. The DO calls counted in
 * this isolate for this tenant are added to every batch a run or a metrics reader delivers.
 */
export class RunReports {
  constructor(private readonly deps: RunReportsDeps) {}

  /**
   * Each agent's highest part and event seq recorded, as this object last read or wrote its row (issue 12 §8, session
   * 12: every report read the row before writing it). Exact: `record` is the rows' only writer and keeps what it
   * wrote once its synchronous part is through (an error before that leaves no entry, so the row is read again); an
   * agent's erasure deletes its row and drops the entry (`forget(agentId)`), the tenant's erasure drops them all.
   * Bounded: past `KEPT_AGENTS` entries the map starts over (those agents' next reports read their rows).
   */
  private readonly kept = new Map<string, { seq: number; events: number }>();

  /**
   * Whether `kept` holds an entry for EVERY numbering row in the table, so an agent without an entry has no row (issue
   * 12 §7: in a fan-out each woken agent reports for the first time since the object started, and each first report
   * read its row, most often to find none). Set by `load`, the first report's one read of all rows when there are at
   * most `LOADED_AGENTS`; kept true by `record` (each report's row is its entry once the report's synchronous part is
   * through; a throw before that leaves it false) and by an agent's erasure (row and entry go together); false once the
   * map starts over or every row is gone (the next report loads again).
   */
  private complete = false;
  private loaded = false;

  /** The rows are gone: one agent's (its erasure), or every agent's. */
  forget(agentId?: string): void {
    if (agentId === undefined) {
      this.kept.clear();
      this.complete = false;
      this.loaded = false;
    } else this.kept.delete(agentId);
  }

  /**
   * Everything the tenant learns from an agent's run, in one call (issue 12 §2): its forwarded events (a
   * re-sent batch adds nothing), the activity notifications, the terminal outcomes and the DO calls. The
   * answer carries the current snapshot version, so an agent that missed a push refreshes at its next run.
   */
  async record(agentId: string, sent: RunReport): Promise<Result<{ recorded: number; snapshotVersion: number }>> {
    // Events an earlier instance of the agent appended come by reference; one new here has its data read back first
    // (before the synchronous part below, which reads what was recorded afresh).
    const report = sent.events.some((event) => event.byReference) ? { ...sent, events: await this.deps.feed.withReferencedData(agentId, sent.events, this.reported(agentId).events) } : sent;
    // Events at or below the agent's highest seq recorded here were recorded before (an agent sends its log in seq
    // order, from its forwarding cursor): skipped even when this tenant's retention has pruned them since, so an agent
    // re-sending after a restart (its cursor is stored lazily: docs/decisions.md "Turn commits (session 10)") adds nothing.
    // From here to the events' publication nothing awaits: the events, the part numbers, the notifications and the
    // counters commit together, on one read of what was recorded before.
    const last = this.reported(agentId);
    // Dropped until this report's writes are through: a throw between them and the end leaves the row to be read.
    this.kept.delete(agentId);
    const complete = this.complete;
    this.complete = false;
    const events = report.events.filter((event) => event.seq > last.events);
    const appended = events.length > 0 ? this.deps.feed.appendAgentEvents(agentId, events) : [];
    const fresh = <T extends { seq?: number }>(parts: T[]) => parts.filter((part) => part.seq === undefined || part.seq > last.seq);
    const activities = report.agent ? fresh(report.activities) : [];
    const top = Math.max(last.seq, ...[...report.activities, ...report.outcomes].map((part) => part.seq ?? 0));
    const eventsTop = Math.max(last.events, ...events.map((event) => event.seq));
    if (top > last.seq || eventsTop > last.events) counterStatements(this.deps.db).write.run({ key: reportedPartKey(agentId), state: { seq: top, events: eventsTop } });
    for (const activity of activities) this.deps.recordActivity(report.agent!, activity);
    // Every counter this report adds, in one statement (issue 12 §8).
    this.deps.metrics.add([
      ...fresh(report.outcomes).flatMap(TenantMetrics.outcomeIncrements),
      ...TenantMetrics.callIncrements([...report.calls, ...takeDoCalls(this.deps.tenantId())]),
    ]);
    if (this.kept.size >= KEPT_AGENTS) this.kept.clear();
    else this.complete = complete;
    this.kept.set(agentId, { seq: top, events: eventsTop });
    await this.deps.feed.afterCommit(appended);
    // A report whose activity no other agent follows records no batch: nothing new to dispatch (issue 12 §8). The
    // notification log marks a batch as unseen at its insert, so one just recorded always runs the pass.
    if (activities.length > 0 && !this.deps.nothingToDispatch()) await this.deps.dispatch();
    return { ok: true, recorded: appended.length, snapshotVersion: this.deps.snapshotVersion() };
  }

  /**
   * The agent's highest event seq recorded, when this object knows it without a read of its own (a dispatch asks it
   * for every agent it wakes): its kept entry, or none when every row is kept (the one read of all rows that the
   * object's first report would make, made by the first dispatch instead); undefined otherwise.
   */
  recordedThrough(agentId: string): number | undefined {
    if (!this.loaded) this.load();
    const known = this.kept.get(agentId);
    if (known) return known.events;
    return this.complete ? 0 : undefined;
  }

  /** The highest report part and agent event seq recorded for the agent (0: none; a row from before session 10 has no `events`). */
  private reported(agentId: string): { seq: number; events: number } {
    if (!this.loaded) this.load();
    const known = this.kept.get(agentId);
    if (known) return known;
    if (this.complete) return { seq: 0, events: 0 };
    const state = counterStatements(this.deps.db).read.get({ key: reportedPartKey(agentId) })?.state;
    return { seq: numberOr0(state?.seq), events: numberOr0(state?.events) };
  }

  /** Reads every numbering row once (at most `LOADED_AGENTS`; with more, each agent's row is read at its first report). */
  private load(): void {
    this.loaded = true;
    const rows = READ_ALL(this.deps.db).all({ limit: LOADED_AGENTS + 1 });
    // Not loaded (`loaded` is false) means nothing is kept yet: the map holds exactly the rows read.
    if (rows.length > LOADED_AGENTS) return;
    for (const row of rows) this.kept.set(row.key.slice("run-report:".length), { seq: numberOr0(row.seq), events: numberOr0(row.events) });
    this.complete = true;
  }

  /** The Prometheus text exposition; `calls` are the DO calls the reading isolate counted for this tenant. */
  metricsText(calls: DoCallCount[]): string {
    this.deps.metrics.recordDoCalls([...calls, ...takeDoCalls(this.deps.tenantId())]);
    return this.deps.metrics.render();
  }
}

/** A stored number, or 0 (a row from before session 10 has no `events`). */
const numberOr0 = (value: unknown): number => (typeof value === "number" ? value : 0);
