import type { Agent } from "../../../schema/agents/agents";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, DoCallCount, RunReport } from "../../../schema/contracts";
import { takeDoCalls } from "../../shared/call-meter";
import { counterStatements } from "../../shared/counters";
import type { EventFeed } from "./event-feed";
import { TenantMetrics } from "./metrics";
import type { TenantDb } from "../types";

/** The highest report-part number recorded for an agent (tenant `counters`; removed when the agent is erased). */
export const reportedPartKey = (agentId: string) => `run-report:${agentId}`;

export interface RunReportsDeps {
  db: TenantDb;
  feed: EventFeed;
  metrics: TenantMetrics;
  /** agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  recordActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): boolean;
  /** Queues the wakes the recorded notification batches match (after they committed). */
  dispatch(): Promise<void>;
  /** True when a dispatch pass would find nothing new (see Dispatcher.nothingToDispatch). */
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
   * Everything the tenant learns from an agent's run, in one call (issue 12 §2): its forwarded events (a
   * re-sent batch adds nothing), the activity notifications, the terminal outcomes and the DO calls. The
   * answer carries the current snapshot version, so an agent that missed a push refreshes at its next run.
   */
  async record(agentId: string, report: RunReport): Promise<Result<{ recorded: number; snapshotVersion: number }>> {
    const recorded = report.events.length > 0 ? await this.deps.feed.recordAgentEvents(agentId, report.events) : 0;
    // From here to the dispatch nothing awaits: the part numbers, the notifications and the counters commit together.
    const last = this.lastReportedPart(agentId);
    const fresh = <T extends { seq?: number }>(parts: T[]) => parts.filter((part) => part.seq === undefined || part.seq > last);
    const activities = report.agent ? fresh(report.activities) : [];
    const top = Math.max(last, ...[...report.activities, ...report.outcomes].map((part) => part.seq ?? 0));
    if (top > last) counterStatements(this.deps.db).write.run({ key: reportedPartKey(agentId), state: { seq: top } });
    let recordedBatch = false;
    for (const activity of activities) recordedBatch = this.deps.recordActivity(report.agent!, activity) || recordedBatch;
    // Every counter this report adds, in one statement (issue 12 §8).
    this.deps.metrics.add([
      ...fresh(report.outcomes).flatMap(TenantMetrics.outcomeIncrements),
      ...TenantMetrics.callIncrements([...report.calls, ...takeDoCalls(this.deps.tenantId())]),
    ]);
    // A report whose activity no other agent follows records no batch: nothing new to dispatch (issue 12 §8).
    if (activities.length > 0 && (recordedBatch || !this.deps.nothingToDispatch())) await this.deps.dispatch();
    return { ok: true, recorded, snapshotVersion: this.deps.snapshotVersion() };
  }

  private lastReportedPart(agentId: string): number {
    const seq = counterStatements(this.deps.db).read.get({ key: reportedPartKey(agentId) })?.state.seq;
    return typeof seq === "number" ? seq : 0;
  }

  /** The Prometheus text exposition; `calls` are the DO calls the reading isolate counted for this tenant. */
  metricsText(calls: DoCallCount[]): string {
    this.deps.metrics.recordDoCalls([...calls, ...takeDoCalls(this.deps.tenantId())]);
    return this.deps.metrics.render();
  }
}
