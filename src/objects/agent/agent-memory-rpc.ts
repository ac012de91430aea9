import { failure, type Result } from "../../http/error-codes";
import type { Page } from "../../schema/common";
import type { ListReportsQuery, Report, ReportHeadView } from "../../schema/reports";
import { AgentCore } from "./agent-core";
import { benchMemory, runBenchOp, type BenchOp } from "./bench-ops";
import type { PumpOutcome } from "./compaction";
import type { ErasureReceipt } from "./erasure";
import { exportStream } from "./export";
import { readMemory, writeSlot, type MemoryView, type SlotWrite } from "./memory";
import { searchMessages, type RecallHit } from "./recall";
import { isReportScope } from "./reports";

/** AgentDO's memory RPC: reports, slots, recall, export, compaction and erasure (SPEC §7). */
export abstract class AgentMemoryRpc extends AgentCore {
  listReports(query: ListReportsQuery): Result<Page<Report>> {
    return this.missingAgent() ?? this.parts.reports.list(query);
  }

  /** A scope's head report with freshness; `nowMs` (the freshness clock) is a test seam honoured only with VIGIL_FAULTS=enabled. */
  getReportHead(scope: string, nowMs?: number): Result<{ report: ReportHeadView }> {
    const missing = this.missingAgent();
    if (missing || !isReportScope(scope)) return missing ?? failure("validation_failed", `scope must be one of current, daily, weekly, monthly`);
    return this.parts.reports.headView(scope, this.env.VIGIL_FAULTS === "enabled" && nowMs !== undefined ? nowMs : Date.now());
  }

  /** Slots with versions, and message/summary counts (SPEC §7). */
  getMemory(): Result<{ memory: MemoryView }> {
    return readMemory(this.parts.db, this.parts.profile);
  }

  /** `extension` writes read the tenant's registered keys first (one TenantDO call); other slots need nothing. */
  async updateSlot(key: string, value: unknown, expectedVersion?: number): Promise<SlotWrite> {
    const agent = this.parts.profile.get();
    const registry = agent && key === "extension" ? await this.parts.governor.extensionSlots(agent) : {};
    return writeSlot(this.parts.profile, this.parts.events, key, value, expectedVersion, { registry });
  }

  /** FTS5 recall over the agent's own messages, best first. */
  searchMemory(query: string, limit: number): Result<{ hits: RecallHit[] }> {
    const missing = this.missingAgent();
    if (missing) return missing;
    const hits = searchMessages(this.parts.db, query, { limit });
    return hits ? { ok: true, hits } : failure("validation_failed", "q must contain at least one letter or digit");
  }

  /** Everything the agent holds, as a lazily paged JSON stream. */
  exportData(): Result<{ stream: ReadableStream<Uint8Array> }> {
    return this.missingAgent() ?? { ok: true, stream: exportStream(this.parts.db, this.parts.profile) };
  }

  /** `POST …/memory/compaction/retry`: requeues every failed_terminal compaction job and works them off in the background. */
  retryCompaction(): Result<{ requeued: number }> {
    return this.missingAgent() ?? { ok: true, requeued: this.parts.compactor.retryFailed() };
  }

  /** Agents SDK schedule callback: a compaction retry came due. */
  async onCompactionAlarm(): Promise<void> {
    this.parts.compactor.maybeCompact(null);
  }

  /** Test seam (VIGIL_FAULTS=enabled only): plans the thread (if given) and works off due jobs as if the clock read `nowMs`. */
  async compactNow(threadId: string | null, nowMs?: number): Promise<Result<PumpOutcome>> {
    return this.seamDisabled() ?? { ok: true, ...(await this.parts.compactor.runNow(threadId, nowMs)) };
  }

  /** Agents SDK schedule callback: the soft-delete window may have passed. */
  async onErasureDue(): Promise<void> {
    this.parts.erasure.eraseWhenDueInBackground();
  }

  /** Tenant erasure: this agent's whole SQLite goes, whatever its lifecycle. */
  async eraseForTenant(): Promise<Result<{ receipt: ErasureReceipt }>> {
    return this.parts.erasure.erase("tenant_erased");
  }

  /** Test seam (VIGIL_FAULTS=enabled only): erases a destroyed agent now instead of after the soft-delete window. */
  async forceErasure(): Promise<Result<{ receipt: ErasureReceipt | null }>> {
    return this.seamDisabled() ?? this.parts.erasure.eraseIfDue(true);
  }

  /** Bench seam (VIGIL_BENCH=enabled only): measurement loops run inside the DO. */
  async benchOp(op: BenchOp): Promise<Result<{ done: number }>> {
    if (this.env.VIGIL_BENCH !== "enabled") return failure("not_found", "no such route");
    return runBenchOp(this.parts.db, this.parts.history, op, benchMemory(this.parts.memoryContext, this.parts.compaction));
  }
}
