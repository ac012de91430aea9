import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { LifecycleCommand } from "../../../core/runtime/lifecycle";
import { projectChildResult } from "../../../core/governance/spawn-projection";
import * as schema from "../../../db/agent-schema";
import type { Result } from "../../../core/runtime/result";
import type { AgentLineage } from "../../../schema/agents/agents";
import type { Run } from "../../../schema/agents/runs";
import { nowIso } from "../../shared/sqlite";
import type { History } from "../memory";
import type { AgentProfile } from "../lifecycle";
import { delegatedRunKey, type ChildReport } from "./spawn";
import type { AgentDb } from "../types";

export interface ChildReportDeps {
  db: AgentDb;
  profile: AgentProfile;
  history: History;
  /** The parent's `receiveChildReport`. */
  deliver(parentId: string, report: ChildReport): Promise<Result<unknown>>;
  /** This agent's own lifecycle command (onComplete: pause or destroy). */
  applyLifecycle(command: LifecycleCommand): Promise<Result<unknown>>;
  /** Asks for another flush later (the watchdog) after a failed delivery. */
  retryLater(): void;
}

/**
 * The child's side of delegation: when its delegated run ends (any terminal status), the projected
 * result goes into an outbox row in the same turn, is delivered to the parent (retried by the
 * watchdog until acknowledged), and then the onComplete policy runs once: `destroy_child_on_success`
 * destroys a child whose run completed, `keep_child_active` leaves it, anything else pauses it.
 */
export class ChildReports {
  private flushing: Promise<void> | null = null;

  constructor(private readonly deps: ChildReportDeps) {}

  /** Run-loop hook: true when `run` was this child's delegated run and its report is now queued. */
  onRunEnded(run: Pick<Run, "runKey" | "status" | "errorCode" | "trace">): boolean {
    const agent = this.deps.profile.get();
    const lineage = agent?.config.lineage;
    if (!agent || !lineage || run.runKey !== delegatedRunKey(agent.id, lineage.spawnOperationId)) return false;
    const replyId = typeof run.trace.replyMessageId === "string" ? run.trace.replyMessageId : null;
    const reply = replyId ? (this.deps.history.get(replyId)?.text ?? null) : null;
    const projected = projectChildResult({ childId: agent.id, childRunKey: run.runKey, status: run.status, errorCode: run.errorCode, reply });
    const report = projected.ok ? projected.payload : { childId: agent.id, childRunKey: run.runKey, status: "failed_terminal", errorCode: projected.code, reply: null };
    this.deps.db.insert(schema.parentReports).values({ childRunKey: run.runKey, report, createdAt: nowIso() }).onConflictDoNothing().run();
    return true;
  }

  /** Delivers what is undelivered and settles what is delivered; single-flight, safe to call any time. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const lineage = this.deps.profile.get()?.config.lineage;
    if (!lineage) return;
    const { db } = this.deps;
    for (const row of db.select().from(schema.parentReports).where(isNull(schema.parentReports.deliveredAt)).all()) {
      const delivered = await this.deps.deliver(lineage.parentId, row.report as unknown as ChildReport).catch((error: unknown) => ({ ok: false as const, code: "unavailable", message: String(error) }));
      // A parent that no longer knows the child (erased) will never take the report: stop retrying.
      if (!delivered.ok && delivered.code !== "not_found") {
        this.deps.retryLater();
        return;
      }
      db.update(schema.parentReports).set({ deliveredAt: nowIso() }).where(eq(schema.parentReports.childRunKey, row.childRunKey)).run();
    }
    for (const row of db.select().from(schema.parentReports).where(and(isNotNull(schema.parentReports.deliveredAt), isNull(schema.parentReports.settledAt))).all()) {
      await this.settle(lineage, String((row.report as Record<string, unknown>).status));
      db.update(schema.parentReports).set({ settledAt: nowIso() }).where(eq(schema.parentReports.childRunKey, row.childRunKey)).run();
    }
  }

  private async settle(lineage: AgentLineage, status: string): Promise<void> {
    const lifecycle = this.deps.profile.get()?.lifecycle;
    if (lifecycle === "destroyed" || lineage.onComplete === "keep_child_active") return;
    if (lineage.onComplete === "destroy_child_on_success" && status === "completed") {
      await this.deps.applyLifecycle("destroy");
      return;
    }
    if (lifecycle === "active") await this.deps.applyLifecycle("pause");
  }
}
