import { asc, eq, gt } from "drizzle-orm";
import { isTenantStreamEvent } from "../../../core/egress/outbound-delivery";
import * as schema from "../../../db/agent-schema";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, ForwardedAgentEvent, RunOutcome, RunReport } from "../../../schema/contracts";
import type { AgentEvent } from "../../../schema/agents/runs";
import type { Agent } from "../../../schema/agents/agents";
import { restoreDoCalls, takeDoCalls } from "../../shared/call-meter";
import type { AgentDb } from "../types";

/** Where forwarding stands: the highest agent event seq the tenant has acknowledged (in the DO's key/JSON table). */
const CURSOR_KEY = "tenant-stream:forwarded-seq";
const BATCH = 200;

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
  /** Stored rows → events as appended (stored events refer to messages and runs; ./event-refs.ts). */
  hydrate: (rows: ReadonlyArray<typeof schema.events.$inferSelect>) => AgentEvent[];
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
 * isolate — one `reportRun` call per run. Activities and outcomes are best effort (memory only), as
 * the separate calls they replace were.
 */
export class EventForwarder {
  private flushing: Promise<void> | null = null;
  private again = false;
  /** A run ended: the next flush goes out even if another run is about to start. */
  private forced = false;
  private agent: RunReport["agent"] = null;
  private activities: AgentRunActivity[] = [];
  private outcomes: RunOutcome[] = [];

  constructor(private readonly deps: ForwarderDeps) {}

  /** Called for every persisted event; only stream-visible types cause a flush, and none while a run holds them for its report. */
  noteAppended(type: string): void {
    if (isTenantStreamEvent(type) && !this.deps.holding()) this.schedule();
  }

  /** A completed run's notifications for subscribers (sent with the run's report). */
  addActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): void {
    this.agent = agent;
    this.activities.push(activity);
  }

  /** A terminal run's outcome for the tenant's metrics (sent with the run's report). */
  addOutcome(outcome: RunOutcome): void {
    this.outcomes.push(outcome);
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
    const flushing = new Promise((resolve) => setTimeout(resolve, 0))
      .then(() => {
        if (!this.forced && this.deps.holding()) return;
        this.forced = false;
        return this.flushAll();
      })
      .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "tenant event forwarding failed", agentId: this.deps.agentId(), error: String(error) })))
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
    const cursor = this.cursor();
    const rows = this.deps.db.select().from(schema.events).where(gt(schema.events.seq, cursor)).orderBy(asc(schema.events.seq)).limit(BATCH).all();
    const events = this.deps
      .hydrate(rows.filter((row) => isTenantStreamEvent(row.type)))
      .map((event): ForwardedAgentEvent => ({ seq: event.seq, type: event.type, runKey: event.runKey, data: event.data, createdAt: event.createdAt }));
    const report: RunReport = { events, agent: this.agent, activities: this.activities, outcomes: this.outcomes, calls: [] };
    this.activities = [];
    this.outcomes = [];
    if (events.length > 0 || report.activities.length > 0 || report.outcomes.length > 0) {
      const tenantId = this.deps.tenantId();
      report.calls = takeDoCalls(tenantId);
      const sent = await this.deps.send(agentId, report).catch((error: unknown) => ({ ok: false as const, code: String(error) }));
      if (!sent.ok) {
        // Nothing is lost by a refused or failed report: the events stay after the cursor; the rest rides on the next one.
        restoreDoCalls(tenantId, report.calls);
        this.activities.unshift(...report.activities);
        this.outcomes.unshift(...report.outcomes);
        throw new Error(`tenant refused the report: ${sent.code}`);
      }
      this.deps.onSnapshotVersion(sent.snapshotVersion);
    }
    // Only forward: the cursor may have moved on while the report was in flight.
    if (rows.length > 0 && rows[rows.length - 1]!.seq > this.cursor()) this.setCursor(rows[rows.length - 1]!.seq);
    if (rows.length === BATCH) this.again = true;
  }

  private cursor(): number {
    const row = this.deps.db.select().from(schema.counters).where(eq(schema.counters.key, CURSOR_KEY)).get();
    const seq = row?.state.seq;
    return typeof seq === "number" ? seq : 0;
  }

  private setCursor(seq: number): void {
    const state = { seq };
    this.deps.db.insert(schema.counters).values({ key: CURSOR_KEY, state }).onConflictDoUpdate({ target: schema.counters.key, set: { state } }).run();
  }
}
