import { eq } from "drizzle-orm";
import { counters } from "../../../db/common-schema";
import type { Agent } from "../../../schema/agents/agents";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, DoCallCount, RunReport } from "../../../schema/contracts";
import type { TenantEvent } from "../../../schema/admin/outbound-webhooks";
import { restoreDoCalls, takeDoCalls } from "../../shared/call-meter";
import type { EventFeed } from "./event-feed";
import { TenantMetrics } from "./metrics";
import type { TenantDb } from "../types";

/** The highest report-part number and agent event seq recorded for an agent (tenant `counters`; removed when the agent is erased). */
export const reportedPartKey = (agentId: string) => `run-report:${agentId}`;

/** Where a report's application can be cut by a test (VIGIL_FAULTS): after its events, and after its activity. */
export type RunReportFault = "tenant.report.afterEvents" | "tenant.report.afterActivity";

export interface RunReportsDeps {
  db: TenantDb;
  feed: EventFeed;
  metrics: TenantMetrics;
  /** agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  recordActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): void;
  /** Queues the wakes the recorded notification batches match (after they committed). */
  dispatch(): Promise<void>;
  /** True when a dispatch pass would find nothing new (Dispatcher.nothingToDispatch); a batch just recorded makes it false. */
  nothingToDispatch(): boolean;
  snapshotVersion(): number;
  tenantId(): string;
  /** Test seam: throws at the named point while armed. */
  fault?(point: RunReportFault): void;
}

/**
 * What the tenant learns from its agents' runs and counts for GET /v1/metrics. The DO calls counted in
 * this isolate for this tenant are added to every batch a run or a metrics reader delivers.
 */
export class RunReports {
  constructor(private readonly deps: RunReportsDeps) {}

  /**
   * Everything the tenant learns from an agent's run, applied in one transaction: its events (with the outbound
   * deliveries they match), the agent's numbering, the activity notifications and the metrics. A throw anywhere leaves
   * nothing applied, so the agent's retry of the same report is applied in full; a report applied before adds nothing
   * (events at or below the agent's highest seq recorded, parts at or below its highest part number, are skipped).
   * Live subscribers, outbound queueing and dispatch follow the commit. The answer carries the snapshot version, so
   * an agent that missed a push refreshes at its next run.
   */
  async record(agentId: string, report: RunReport): Promise<Result<{ recorded: number; snapshotVersion: number }>> {
    // The DO calls this isolate counted go with the report's metrics, and back to the meter if it is not applied.
    const counted = takeDoCalls(this.deps.tenantId());
    let applied: { appended: TenantEvent[]; activities: boolean };
    try {
      applied = this.deps.db.transaction(() => this.apply(agentId, report, counted));
    } catch (error) {
      restoreDoCalls(this.deps.tenantId(), counted);
      throw error;
    }
    const { appended, activities } = applied;
    await this.deps.feed.afterCommit(appended);
    if (activities && !this.deps.nothingToDispatch()) await this.deps.dispatch();
    return { ok: true, recorded: appended.length, snapshotVersion: this.deps.snapshotVersion() };
  }

  /** The report's writes (inside `record`'s transaction); `activities`: whether it carried new activity. */
  private apply(agentId: string, report: RunReport, counted: DoCallCount[]): { appended: TenantEvent[]; activities: boolean } {
    const last = this.reported(agentId);
    const events = report.events.filter((event) => event.seq > last.events);
    const appended = events.length > 0 ? this.deps.feed.appendAgentEvents(agentId, events) : [];
    this.deps.fault?.("tenant.report.afterEvents");
    const fresh = <T extends { seq?: number }>(parts: T[]) => parts.filter((part) => part.seq === undefined || part.seq > last.seq);
    const activities = report.agent ? fresh(report.activities) : [];
    for (const activity of activities) this.deps.recordActivity(report.agent!, activity);
    this.deps.fault?.("tenant.report.afterActivity");
    this.deps.metrics.add([
      ...fresh(report.outcomes).flatMap(TenantMetrics.outcomeIncrements),
      ...TenantMetrics.callIncrements([...report.calls, ...counted]),
    ]);
    const top = Math.max(last.seq, ...[...report.activities, ...report.outcomes].map((part) => part.seq ?? 0));
    const eventsTop = Math.max(last.events, ...events.map((event) => event.seq));
    if (top > last.seq || eventsTop > last.events) this.writeReported(agentId, { seq: top, events: eventsTop });
    return { appended, activities: activities.length > 0 };
  }

  /** The highest report part and agent event seq recorded for the agent (0: none). */
  private reported(agentId: string): { seq: number; events: number } {
    const state = this.deps.db.select({ state: counters.state }).from(counters).where(eq(counters.key, reportedPartKey(agentId))).get()?.state;
    return { seq: numberOr0(state?.seq), events: numberOr0(state?.events) };
  }

  private writeReported(agentId: string, state: { seq: number; events: number }): void {
    this.deps.db.insert(counters).values({ key: reportedPartKey(agentId), state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
  }

  /** The Prometheus text exposition; `calls` are the DO calls the reading isolate counted for this tenant. */
  metricsText(calls: DoCallCount[]): string {
    this.deps.metrics.recordDoCalls([...calls, ...takeDoCalls(this.deps.tenantId())]);
    return this.deps.metrics.render();
  }
}

const numberOr0 = (value: unknown): number => (typeof value === "number" ? value : 0);
