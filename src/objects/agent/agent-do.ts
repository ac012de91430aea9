import { Agent as AgentBase } from "agents";
import type { LifecycleCommand } from "../../core/runtime/lifecycle";
import type { ToolResultEnvelope } from "../../core/tools/tool-envelopes";
import type { Env } from "../../env";
import { failure, type Failure, type Result } from "../../core/runtime/result";
import { configureLogging } from "../../log";
import type { Agent, AgentLineage, AgentState, CreateAgentBody, PatchAgentBody } from "../../schema/agents/agents";
import type { AgentUsage } from "../../schema/admin/brakes";
import type { Page } from "../../schema/common";
import type { Message } from "../../schema/agents/messages";
import type { SessionView } from "../../schema/agents/sessions";
import type { ListReportsQuery, Report, ReportHeadView } from "../../schema/agents/reports";
import type { AgentEvent, Run } from "../../schema/agents/runs";
import type { CreateTimerBody, ListTimersQuery, Timer } from "../../schema/agents/timers";
import type { WakeJob } from "../../schema/agents/wake";
import { runHooks } from "../shared/hooks";
import { dumpTables, Seams, type TableDump } from "../shared/seams";
import type { AgentSnapshot, ApprovalState } from "../../schema/contracts";
import type { PumpOutcome } from "./compaction";
import type { ChildReport, ChildWake } from "./delegation";
import { openEventStream, type AgentPruneOutcome } from "./events";
import { exportStream, type ErasureReceipt, type AgentScheduler, persistSdkName } from "./lifecycle";
import { benchMemory, runBenchOp, type BenchOp, recall, type RecallHit, readMemory, writeSlot, type MemoryView, type SlotWrite } from "./memory";
import { messagePage, runDetail, runPage } from "./runs";
import type { TickOutcome } from "./timers";
import type { TurnInput, EnqueueOutcome } from "./wakes";
import type { StorageFootprint } from "../shared/storage-footprint";
import { AgentWiring } from "./wiring";
import { cursorExpired, expiredCursor } from "../../core/memory/retention";

export type { TurnInput } from "./wakes";

/**
 * One agent: the only class of this Durable Object. Its RPC methods are one-line delegations to the
 * parts (built in ./wiring.ts), grouped by area; the rules live in the parts and in src/core. The
 * Agents SDK schedule callbacks (`AgentCallback` in ./lifecycle/schedule.ts) are methods here
 * because the SDK calls them by name.
 *
 * The SDK wraps an `async` method so that it first awaits the SDK's own start; the wake entries start it
 * themselves (`sdkStarted`), so they behave the same whether or not they are declared `async`
 * (docs/decisions/wake-entries-start-the-sdk.md).
 */
export class AgentDO extends AgentBase<Env> {
  /** Every part of this agent (tests inspect them as `instance.parts.<name>`). */
  readonly parts: AgentWiring;
  private readonly seams: Seams;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    configureLogging(env.VIGIL_LOG_LEVEL);
    const scheduler: AgentScheduler = {
      schedule: (when, callback, options) => this.schedule(when, callback, undefined, options),
      // listSchedules waits for the SDK's scheduler to start (and migrate old rows); the sync getSchedules is deprecated.
      listSchedules: () => this.listSchedules(),
      every: (seconds, callback) => this.scheduleEvery(seconds, callback),
      cancelSchedule: (id) => this.cancelSchedule(id),
    };
    persistSdkName(ctx);
    this.parts = new AgentWiring(ctx, env, scheduler);
    this.seams = new Seams(env);
    this.seams.meter(ctx.storage);
  }

  /** The SDK's start (idempotent): what its wrapper of an `async` method awaits, awaited here whatever the declaration. */
  private async sdkStarted(): Promise<void> {
    if (!this.lifecycle.isStarted()) await this.lifecycle.start();
  }

  /** not_found while this object holds no agent (never created, or erased). The facade's one not-found check. */
  private missingAgent(): Failure | null {
    return this.parts.profile.get() ? null : failure("not_found", "agent not found");
  }

  /**
   * not_found for history reads (messages, memory, search, reports, export) once the agent is destroyed
   * too: its history is soft-deleted — hidden at once, erased after the window (docs/decisions.md).
   */
  private hiddenAgent(): Failure | null {
    const agent = this.parts.profile.get();
    return agent && agent.lifecycle !== "destroyed" ? null : failure("not_found", "agent not found");
  }

  // ── Profile and lifecycle ──────────────────────────────────────────────────────────────────────
  async createAgent(tenantId: string, agentId: string, body: CreateAgentBody): Promise<Result<{ agent: Agent }>> {
    const created = await this.parts.lifecycle.create(tenantId, agentId, body);
    if (created.ok) this.parts.armRetentionAfterCreate();
    return created;
  }

  getAgent(): Agent | null {
    return this.parts.profile.get();
  }

  async getState(): Promise<Result<{ state: AgentState }>> {
    const state = this.parts.profile.state();
    return state ? { ok: true, state } : failure("not_found", "agent not found");
  }

  async patchAgent(body: PatchAgentBody): Promise<Result<{ agent: Agent }>> {
    return this.parts.lifecycle.patch(body);
  }

  async applyLifecycle(command: LifecycleCommand): Promise<Result<{ agent: Agent }>> {
    return this.parts.lifecycle.apply(command);
  }

  // ── Wakes: user turns and every other wake ─────────────────────────────────────────────────────
  /** A user turn: admission, per-agent turn limit, deterministic runKey, inbox. */
  async submitTurn(turn: TurnInput): Promise<Result<{ runKey: string; outcome: EnqueueOutcome["status"]; stream: ReadableStream<Uint8Array> | null }>> {
    return this.sdkStarted().then(() => this.parts.wakes.submitTurn(turn));
  }

  /** Any other wake (inbound hooks, decision answers); duplicates of a known runKey are acknowledged and dropped. */
  async enqueueWake(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    return this.sdkStarted().then(() => this.parts.wakes.enqueue(job));
  }

  /** WAKE_QUEUE's consumer: as `enqueueWake`, the run drained in the same stretch, watched only if left open (./wakes/delivery.ts). */
  async deliverWake(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    return this.sdkStarted().then(() => this.parts.delivery.deliver(job));
  }

  /** WAKE_QUEUE's dead-letter consumer: a wake that was never delivered ends as a failed_terminal run (`wake_dead_lettered`). */
  async settleDeadWake(job: WakeJob): Promise<Result<{ settled: boolean; runStatus: Run["status"] }>> {
    const missing = this.missingAgent();
    if (missing) return missing;
    const { settled, run } = this.parts.inbox.settleUndelivered(job, "wake_dead_lettered");
    return { ok: true, settled, runStatus: run.status };
  }

  // ── Runs, messages and events ──────────────────────────────────────────────────────────────────
  /** `eventSeq`: the event log position this page is consistent with, so a reader resumes /events there without gap or duplicate. */
  async listMessages(query: { limit: number; cursor?: string | undefined; threadId?: string | undefined }): Promise<Result<Page<Message> & { eventSeq: number }>> {
    return this.hiddenAgent() ?? messagePage(this.parts.history, this.parts.events, query);
  }

  async listRuns(query: { limit: number; cursor?: string | undefined }): Promise<Result<Page<Run>>> {
    return this.missingAgent() ?? runPage(this.parts.inbox, this.parts.runView, query);
  }

  async getRun(runKey: string): Promise<Result<{ run: Run }>> {
    return runDetail(this.parts.profile, this.parts.inbox, this.parts.runView, runKey);
  }

  listEvents(after: number, limit: number): AgentEvent[] {
    return this.parts.events.listAfter(after, limit);
  }

  /** SSE body: replay after `after`, then live; `widgetNamespace` narrows it to that visitor's threads. */
  openEvents(after: number, widgetNamespace?: string): Result<{ stream: ReadableStream<Uint8Array> }> {
    const missing = this.missingAgent();
    if (missing) return missing;
    // after = 0 asks for everything still kept; a later cursor below the pruned mark would skip events unseen.
    const prunedThrough = this.parts.retention.prunedThrough();
    if (after > 0 && cursorExpired(after, prunedThrough)) return expiredCursor(prunedThrough);
    return { ok: true, stream: openEventStream(this.parts.events, this.parts.profile, this.parts.inbox, after, widgetNamespace) };
  }

  // ── Sessions ───────────────────────────────────────────────────────────────────────────────────
  /** `POST …/sessions/:sid/close`: idempotent; an unknown session is not_found. */
  async closeSession(sessionId: string): Promise<Result<{ session: SessionView; changed: boolean }>> {
    return this.missingAgent() ?? this.parts.sessions.close(sessionId);
  }

  // ── Brakes, budgets and usage ──────────────────────────────────────────────────────────────────
  /**
   * The tenant pushes a new snapshot (policy, brakes, limits, HTTP tools) when it changes (issue 12 §2); an older
   * version than the one held is ignored. True when it is now in force.
   */
  applyTenantSnapshot(snapshot: AgentSnapshot): boolean {
    return this.parts.snapshot.apply(snapshot);
  }

  /** The brake that would refuse a new API wake of this agent now, or null. */
  async wakeBrake(): Promise<{ brakeId: string; behaviour: string } | null> {
    const agent = this.parts.profile.get();
    return agent ? this.parts.governor.brakeOnWake(agent) : null;
  }

  /** `GET /v1/agents/:id/usage`: one tenant-local day (today by default) against the budgets and quotas in force. */
  async getUsage(day?: string): Promise<Result<{ usage: AgentUsage }>> {
    return this.missingAgent() ?? { ok: true, usage: await this.parts.governor.usageView(this.parts.profile.get()!, day) };
  }

  // ── Timers ─────────────────────────────────────────────────────────────────────────────────────
  /** `keyedId`: the id a create under an Idempotency-Key derives; a timer already holding it is the answer. */
  createTimer(body: CreateTimerBody, keyedId?: string): Promise<Result<{ timer: Timer }>> {
    return this.parts.timers.create(body, keyedId);
  }

  listTimers(query: ListTimersQuery): Result<Page<Timer>> {
    return this.parts.timers.list(query);
  }

  deleteTimer(timerId: string): Promise<Result<{ timer: Timer }>> {
    return this.parts.timers.delete(timerId);
  }

  /** Runs a timer now (reason manual); `requestId` is the Idempotency-Key or a random id. */
  triggerTimer(timerId: string, requestId: string): Result<{ runKey: string; outcome: EnqueueOutcome["status"] }> {
    return this.parts.timers.trigger(timerId, requestId);
  }

  // ── Tool sagas (called by the ToolSagaWorkflow) ────────────────────────────────────────────────
  /** The tool saga's approval outcome (JSON text of `ApprovalState`), before phase 1; safe to repeat. */
  async recordApproval(operationId: string, outcome: string): Promise<Result<{ recorded: boolean; refusal: string | null }>> {
    return this.parts.sagas.recordApproval(operationId, JSON.parse(outcome) as ApprovalState);
  }

  /** Saga phase 2 (safe to call any number of times). */
  async recordToolResult(operationId: string, result: ToolResultEnvelope): Promise<Result<{ resumed: boolean }>> {
    return this.parts.sagas.record(operationId, result);
  }

  /** Agents SDK interval callback, armed while any tool call waits on a saga: settles lost or errored ones. */
  async sagaWatch(): Promise<void> {
    await this.parts.sagas.recover();
  }

  async recoverSagas(): Promise<number> {
    return this.parts.sagas.recover();
  }

  // ── Delegation (SPEC §3) ───────────────────────────────────────────────────────────────────────
  /** Creates this agent as a spawned child (idempotent per spawn operation) and enqueues its delegated wake; arms the lineage TTL. */
  async createChildAgent(tenantId: string, agentId: string, body: CreateAgentBody, lineage: AgentLineage, wake: ChildWake): Promise<Result<{ agent: Agent }>> {
    return this.parts.delegation.createChild(tenantId, agentId, body, lineage, wake);
  }

  /** One of this agent's children reports its delegated run; the answer is a `child` wake. */
  async receiveChildReport(report: ChildReport): Promise<Result<{ runKey: string }>> {
    return this.parts.delegation.receiveReport(report);
  }

  // ── Memory: reports, slots, recall, export, compaction (SPEC §7) ──────────────────────────────
  listReports(query: ListReportsQuery): Result<Page<Report>> {
    return this.hiddenAgent() ?? this.parts.reports.list(query);
  }

  /** A scope's head report with freshness; `nowMs` (the freshness clock) is a test seam. */
  getReportHead(scope: string, nowMs?: number): Result<{ report: ReportHeadView }> {
    return this.hiddenAgent() ?? this.parts.reports.headOf(scope, this.seams.clock(nowMs));
  }

  /** Slots with versions, and message/summary counts (SPEC §7). */
  getMemory(): Result<{ memory: MemoryView }> {
    return this.hiddenAgent() ?? readMemory(this.parts.db, this.parts.profile);
  }

  /** `extension` writes read the tenant's registered keys first (one TenantDO call); other slots need nothing. */
  async updateSlot(key: string, value: unknown, expectedVersion?: number): Promise<SlotWrite> {
    const agent = this.parts.profile.get();
    const registry = agent && key === "extension" ? await this.parts.governor.extensionSlots(agent) : {};
    return writeSlot(this.parts.profile, this.parts.events, key, value, expectedVersion, { registry });
  }

  /** FTS5 recall over the agent's own messages, best first. */
  searchMemory(query: string, limit: number): Result<{ hits: RecallHit[] }> {
    return this.hiddenAgent() ?? recall(this.parts.db, query, limit);
  }

  /** Everything the agent holds, as a lazily paged JSON stream. */
  exportData(): Result<{ stream: ReadableStream<Uint8Array> }> {
    return this.hiddenAgent() ?? { ok: true, stream: exportStream(this.parts.db, this.parts.profile) };
  }

  /** `POST …/memory/compaction/retry`: requeues every failed_terminal compaction job and works them off in the background. */
  retryCompaction(): Result<{ requeued: number }> {
    return this.missingAgent() ?? { ok: true, requeued: this.parts.compactor.retryFailed() };
  }

  // ── Erasure ────────────────────────────────────────────────────────────────────────────────────
  /** Tenant erasure: this agent's whole SQLite goes, whatever its lifecycle. */
  async eraseForTenant(): Promise<Result<{ receipt: ErasureReceipt }>> {
    return this.parts.erasure.erase("tenant_erased");
  }

  // ── Agents SDK schedule callbacks (called by name) ─────────────────────────────────────────────
  /** Resumes the drain, sagas and child reports after a restart even if no request arrives (the onWatchdog hooks). */
  async watchdog(): Promise<void> {
    await runHooks(this.parts.onWatchdog);
  }

  /** The timers keep one schedule, at the earliest nextRunAt. */
  async onTimerAlarm(): Promise<void> {
    await this.parts.timers.runDue();
  }

  /** A compaction retry came due. */
  async onCompactionAlarm(): Promise<void> {
    this.parts.compactor.maybeCompact(null);
  }

  /** The soft-delete window may have passed. */
  async onErasureDue(): Promise<void> {
    this.parts.erasure.eraseWhenDueInBackground();
  }

  /** The earliest open session's inactivity deadline came due (one bounded batch). */
  async onSessionExpiry(): Promise<void> {
    await this.parts.sessions.expireDue();
  }

  /** One retention pass over the event log and finished compaction jobs. */
  async onRetentionDue(): Promise<void> {
    await this.parts.retention.run();
  }

  /** A child past its TTL is destroyed (its delegated run, if unfinished, reports as skipped). */
  async expireLineage(): Promise<void> {
    await this.parts.delegation.expireLineage();
  }

  // ── Test and bench seams (refused unless VIGIL_FAULTS / VIGIL_BENCH=enabled) ───────────────────
  armFault(point: string, times = 1): boolean {
    return this.parts.faults.arm(point, times);
  }

  /** Every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    return this.seams.refused("dumps") ?? { ok: true, tables: await dumpTables(this.ctx.storage) };
  }

  /** One timer tick as if the clock read `nowMs`. */
  async tickTimers(nowMs: number): Promise<Result<TickOutcome>> {
    return this.seams.refused("clocks") ?? { ok: true, ...(await this.parts.timers.runDue(nowMs)) };
  }

  /** Freezes the timers' clock at `nowMs` (null: real time, re-arm). */
  async setTimerClock(nowMs: number | null): Promise<boolean> {
    if (this.seams.refused("clocks")) return false;
    await this.parts.timers.setClock(nowMs);
    return true;
  }

  /** Plans the thread (if given) and works off due jobs as if the clock read `nowMs`. */
  async compactNow(threadId: string | null, nowMs?: number): Promise<Result<PumpOutcome>> {
    return this.seams.refused("clocks") ?? { ok: true, ...(await this.parts.compactor.runNow(threadId, nowMs)) };
  }

  /** Erases a destroyed agent now instead of after the soft-delete window. */
  async forceErasure(): Promise<Result<{ receipt: ErasureReceipt | null }>> {
    return this.seams.refused("clocks") ?? this.parts.erasure.eraseIfDue(true);
  }

  /** One session expiry sweep as if the clock read `nowMs`. */
  async expireSessions(nowMs: number): Promise<Result<{ closed: number; more: boolean }>> {
    return this.seams.refused("clocks") ?? { ok: true, ...(await this.parts.sessions.expireDue(nowMs)) };
  }

  /** One retention pass with the tenant's bounds, as if the clock read `nowMs`. */
  async pruneNow(nowMs: number): Promise<Result<AgentPruneOutcome>> {
    return this.seams.refused("clocks") ?? { ok: true, ...this.parts.retention.prune(await this.parts.retention.currentPolicy(), nowMs) };
  }

  /** Measurement loops run inside the DO (bench/). */
  async benchOp(op: BenchOp): Promise<Result<{ done: number; footprint?: StorageFootprint }>> {
    const refused = this.seams.benchRefused();
    if (refused) return refused;
    const done = await runBenchOp(this.parts.db, this.parts.history, op, benchMemory(this.parts.memoryContext, this.parts.compaction), this.ctx.storage.sql);
    return done;
  }
}
