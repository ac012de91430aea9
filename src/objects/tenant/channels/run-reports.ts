import type { Agent } from "../../../schema/agents/agents";
import type { Result } from "../../../core/runtime/result";
import type { AgentRunActivity, DoCallCount, RunReport } from "../../../schema/contracts";
import { takeDoCalls } from "../../shared/call-meter";
import type { EventFeed } from "./event-feed";
import type { TenantMetrics } from "./metrics";

export interface RunReportsDeps {
  feed: EventFeed;
  metrics: TenantMetrics;
  /** agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  activityRan(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): Promise<void>;
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
    if (report.agent) for (const activity of report.activities) await this.deps.activityRan(report.agent, activity);
    for (const outcome of report.outcomes) this.deps.metrics.recordRunOutcome(outcome);
    this.deps.metrics.recordDoCalls([...report.calls, ...takeDoCalls(this.deps.tenantId())]);
    return { ok: true, recorded, snapshotVersion: this.deps.snapshotVersion() };
  }

  /** The Prometheus text exposition; `calls` are the DO calls the reading isolate counted for this tenant. */
  metricsText(calls: DoCallCount[]): string {
    this.deps.metrics.recordDoCalls([...calls, ...takeDoCalls(this.deps.tenantId())]);
    return this.deps.metrics.render();
  }
}
