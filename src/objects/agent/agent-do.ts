import { Agent as AgentBase } from "agents";
import { config, rateLimitsFrom } from "../../config";
import type { LifecycleCommand } from "../../core/lifecycle";
import { rateLimitKeys } from "../../core/rate-limit";
import { runKeys, threadIds } from "../../core/run-keys";
import * as schema from "../../db/agent-schema";
import type { Env } from "../../env";
import { agentStub, tenantStub } from "../stubs";
import { failure, type Result } from "../../http/error-codes";
import migrations from "../../../migrations/agent";
import { agentModelGateway } from "../../gateway/model-gateway";
import type { Agent, AgentLineage, AgentState, CreateAgentBody, PatchAgentBody } from "../../schema/agents";
import { decodeCursor, encodeCursor, type Page } from "../../schema/common";
import type { Authority, Message } from "../../schema/messages";
import type { AgentEvent, Run } from "../../schema/runs";
import type { WakeJob } from "../../schema/wake";
import { z } from "zod";
import { consumeCounter } from "../counters";
import { FaultSeam } from "../faults";
import { openDatabase } from "../sqlite";
import { dumpTables, type TableDump } from "../debug-dump";
import { EventLog } from "./event-log";
import { EventForwarder } from "./event-forwarder";
import { History } from "./history";
import { runBenchOp, type BenchOp } from "./bench-ops";
import { AgentProfile } from "./profile";
import { ActionStore } from "./actions";
import { isReportScope, Reports } from "./reports";
import { readMemory, writeSlot, type MemoryView, type SlotWrite } from "./memory";
import { searchMessages, type RecallHit } from "./recall";
import { exportStream } from "./export";
import type { ListReportsQuery, Report, ReportHeadView } from "../../schema/reports";
import { ToolRunner } from "./tool-runner";
import { ChildrenStore } from "./children";
import { RunView } from "./run-view";
import { ChildReports } from "./child-report";
import { Spawner, type ChildReport, type ChildWake } from "./spawn";
import { Sagas } from "./sagas";
import { ApprovalGate } from "./approval-gate";
import type { ApprovalState } from "../tenant/tool-approvals";
import { httpToolGate, type HttpToolGate } from "./http-tools";
import type { ToolResultEnvelope } from "../../core/tool-envelopes";
import { InjectedCrash, RunLoop } from "./run-loop";
import { RunTrace } from "./run-trace";
import { Compaction } from "./compaction";
import { MemoryContext } from "./context";
import { AgentErasure, type ErasureReceipt } from "./erasure";
import { Summarizer } from "./summarizer";
import { DEFAULT_COMPACTION_RETRY_POLICY } from "../../core/compaction-job";
import { completeText } from "../../gateway/complete-text";
import { MeteredRunTrace, RunGovernor } from "./budgets";
import { UsageStore } from "./usage-store";
import type { AgentUsage } from "../../schema/brakes";
import type { AgentDb } from "./types";
import { WakeInbox, type EnqueueOutcome } from "./wake-inbox";
import { TimerAlarm } from "./timer-alarm";
import { Timers, type TickOutcome } from "./timers";
import type { CreateTimerBody, ListTimersQuery, Timer } from "../../schema/timers";

export interface TurnInput {
  text: string;
  sessionId: string;
  turnId: string;
  authority: Authority;
  stream: boolean;
}

/**
 * One agent: a thin shell that wires its parts (profile, history, inbox, run loop, event log) to
 * its own SQLite and exposes a small typed RPC surface. The rules live in src/core.
 */
export class AgentDO extends AgentBase<Env> {
  private readonly db: AgentDb;
  private readonly log: EventLog;
  private readonly profile: AgentProfile;
  private readonly history: History;
  private readonly inbox: WakeInbox;
  private readonly loop: RunLoop;
  private readonly faults: FaultSeam;
  private readonly actions: ActionStore;
  private readonly reports: Reports;
  private readonly tools: ToolRunner;
  private readonly timers: Timers;
  private readonly sagas: Sagas;
  private readonly approvalGate: ApprovalGate;
  private readonly runTrace: RunTrace;
  /** Delegation (SPEC §3): children this agent spawned, spawn admission, and — as a child — its report outbox. */
  private readonly children: ChildrenStore;
  private readonly spawner: Spawner;
  private readonly childReports: ChildReports;
  /** The run record completed for GET …/runs (tool calls, trace rows, lineage). */
  private readonly runView: RunView;
  /** Forwards persisted events to the tenant-wide stream (and its outbound webhooks). */
  private readonly forwarder: EventForwarder;
  /** Memory (helper "memory"): compaction jobs, the run's context, erasure after destroy. */
  private readonly compaction: Compaction;
  private readonly memoryContext: MemoryContext;
  private readonly erasure: AgentErasure;
  /** Brakes, daily budgets, tool quotas and tool rate limits (src/objects/agent/budgets.ts). */
  private readonly governor: RunGovernor;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Work interrupted by a restart or eviction resumes on the first activation afterwards.
    this.db = openDatabase(ctx, schema, migrations, () => {
      if (this.inbox.pendingCount() > 0) this.startDraining();
      // Timer slots missed while the object slept are caught up on activation.
      this.timers.catchUp();
      // Events a flush did not get to before the object stopped reach the tenant stream now.
      this.forwarder.schedule();
      // Compaction interrupted by a restart counts as a failed attempt and resumes off the request path.
      this.compaction.recover();
      this.maybeCompact(null);
    });
    this.log = new EventLog(this.db);
    this.forwarder = new EventForwarder({
      db: this.db,
      agentId: () => this.profile.get()?.id ?? "",
      send: (agentId, events) => tenantStub(this.env, this.tenantId()).recordAgentEvents(agentId, events),
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    this.log.onPersisted((type) => this.forwarder.noteAppended(type));
    this.profile = new AgentProfile(this.db, this.log);
    this.history = new History(this.db, this.log, () => this.profile.get()?.id ?? "");
    this.inbox = new WakeInbox(this.db, this.log);
    this.faults = new FaultSeam(env.VIGIL_FAULTS === "enabled", (point) => new InjectedCrash(`injected crash at ${point}`));
    this.actions = new ActionStore(this.db);
    this.runTrace = new MeteredRunTrace(this.db, (entry) => this.governor.recordModelUsage(entry));
    this.governor = new RunGovernor({
      db: this.db,
      usage: new UsageStore(this.db),
      trace: this.runTrace,
      governanceFor: (agent) => tenantStub(this.env, this.tenantId()).governanceFor(agent),
      defaultToolRatePerMinute: rateLimitsFrom(env.VIGIL_RATE_LIMITS).callsPerMinutePerAgentTool,
    });
    this.reports = new Reports(this.db, () => this.profile.get()?.id ?? "");
    this.children = new ChildrenStore(this.db);
    this.runView = new RunView(this.db, this.runTrace, this.children);
    this.spawner = new Spawner({
      db: this.db,
      trace: this.runTrace,
      children: this.children,
      context: (parent) => tenantStub(this.env, this.tenantId()).delegationContext({ agentId: parent.id, kind: parent.kind }),
      recordDecision: (decision) => this.ctx.waitUntil(tenantStub(this.env, this.tenantId()).recordSpawnDecision(decision).catch(() => undefined)),
      createChild: (childId, body, lineage, wake) => agentStub(this.env, this.tenantId(), childId).createChildAgent(this.tenantId(), childId, body, lineage, wake),
      now: () => Date.now(),
    });
    this.childReports = new ChildReports({
      db: this.db,
      profile: this.profile,
      history: this.history,
      deliver: (parentId, report) => agentStub(this.env, this.tenantId(), parentId).receiveChildReport(report),
      applyLifecycle: (command) => this.applyLifecycle(command),
      retryLater: () => void this.schedule(config.run.watchdogSeconds, "watchdog", undefined, { idempotent: true }).catch(() => undefined),
    });
    const summarizer = new Summarizer(DEFAULT_COMPACTION_RETRY_POLICY, async ({ system, prompt }) => {
      const output = await completeText({ env: this.env, grants: tenantStub(this.env, this.tenantId()), agent: this.profile.get()!, purpose: "compaction", system, messages: [{ role: "user", content: prompt }] });
      return output.text;
    });
    this.compaction = new Compaction({
      db: this.db,
      history: this.history,
      profile: this.profile,
      events: this.log,
      summarize: (request) => summarizer.summarize(request),
      scheduleRetry: (atMs) => (atMs <= Date.now() ? this.maybeCompact(null) : void this.armCompactionAlarm(atMs).catch(() => undefined)),
      fault: (point) => this.faults.hit(point),
    });
    this.memoryContext = new MemoryContext(this.db, this.profile, this.reports, this.compaction);
    this.erasure = new AgentErasure({
      ctx,
      db: this.db,
      migrations,
      profile: this.profile,
      tenantId: () => this.tenantId(),
      reportErased: (receipt: ErasureReceipt) => tenantStub(this.env, receipt.tenantId).recordAgentErased(receipt),
      schedule: (when, callback) => this.schedule(when, callback, undefined, { idempotent: true }),
    });
    this.tools = new ToolRunner({
      actions: this.actions,
      history: this.history,
      events: this.log,
      agentTools: {
        profile: this.profile,
        events: this.log,
        reports: this.reports,
        recall: (query, options) => searchMessages(this.db, query, options),
        threadOfRun: (runKey) => this.inbox.getRun(runKey)?.threadId ?? runKey,
        openQuestion: (request) =>
          tenantStub(this.env, this.tenantId()).openQuestion({ ...request, agentId: this.profile.get()!.id, threadId: this.inbox.getRun(request.runKey)?.threadId }),
      },
      executeTenantTool: (invocation) => tenantStub(this.env, this.tenantId()).executeTool(invocation),
      startSaga: (invocation, approval) => this.sagas.start(invocation, approval),
      approvalFor: (context, action, tool, confidence) => this.approvalGate.check(context, action, tool, confidence),
      threadOfRun: (runKey) => this.inbox.getRun(runKey)?.threadId ?? runKey,
      tenantTools: () => this.tenantHttpTools(),
      spawn: (context, action) => this.spawner.execute(context.agent, action, context.reason),
      gateTool: (context, action, mutating) => this.governor.gateTool(context.agent, action, mutating),
    });
    this.approvalGate = new ApprovalGate({ events: this.log, trace: this.runTrace, request: (request) => tenantStub(this.env, this.tenantId()).requestToolApproval(request) });
    this.sagas = new Sagas({
      env,
      db: this.db,
      events: this.log,
      trace: this.runTrace,
      actions: this.actions,
      tools: this.tools,
      inbox: this.inbox,
      tenantId: () => this.tenantId(),
      agentId: () => this.profile.get()?.id ?? "",
      takeFaults: () => this.faults.take("saga."),
      resume: () => this.startDraining(),
    });
    this.loop = new RunLoop({
      events: this.log,
      trace: this.runTrace,
      governor: this.governor,
      profile: this.profile,
      history: this.history,
      inbox: this.inbox,
      actions: this.actions,
      tools: this.tools,
      model: agentModelGateway({ env, grants: () => tenantStub(this.env, this.tenantId()), trace: this.runTrace }),
      fault: (point) => this.faults.hit(point),
      memoryContext: (threadId, runKey) => this.memoryContext.modelMessages(threadId, runKey),
      afterRun: (threadId) => this.maybeCompact(threadId),
      httpTools: () => this.tenantHttpTools(),
      announce: (activity) => {
        const agent = this.profile.get();
        if (!agent) return;
        const sent = tenantStub(this.env, this.tenantId())
          .recordAgentActivity({ id: agent.id, kind: agent.kind, lifecycle: agent.lifecycle }, activity)
          .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "agent activity notification failed", agentId: agent.id, error: String(error) })));
        this.ctx.waitUntil(sent);
      },
      runEnded: (run) => {
        if (this.childReports.onRunEnded(run)) this.ctx.waitUntil(this.childReports.flush());
      },
      recordOutcome: (outcome) => {
        const tenantId = this.tenantId();
        if (!tenantId) return;
        const sent = tenantStub(this.env, tenantId)
          .recordRunOutcome(outcome)
          .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "run outcome metrics failed", error: String(error) })));
        this.ctx.waitUntil(sent);
      },
    });
    this.timers = new Timers({ db: this.db, profile: this.profile, inbox: this.inbox, alarm: new TimerAlarm(this), kick: () => this.startDraining() });
  }

  async createAgent(tenantId: string, agentId: string, body: CreateAgentBody): Promise<Result<{ agent: Agent }>> {
    const result = this.profile.create(tenantId, agentId, body);
    if (result.ok) await this.syncDirectory(tenantId, result.agent);
    return result;
  }

  getAgent(): Agent | null {
    return this.profile.get();
  }

  async getState(): Promise<Result<{ state: AgentState }>> {
    const state = this.profile.state();
    return state ? { ok: true, state } : failure("not_found", "agent not found");
  }

  async patchAgent(body: PatchAgentBody): Promise<Result<{ agent: Agent }>> {
    const result = this.profile.patch(body);
    if (result.ok) await this.syncDirectory(this.tenantId(), result.agent);
    return result;
  }

  async applyLifecycle(command: LifecycleCommand): Promise<Result<{ agent: Agent }>> {
    const result = this.profile.command(command);
    if (!result.ok) return result;
    if (command === "destroy") await this.timers.tombstoneAll();
    if (command === "destroy" && result.changed) await this.erasure.scheduleAfterDestroy();
    if (result.changed) await this.syncDirectory(this.tenantId(), result.agent);
    // Destroy: queued wakes settle as skipped_destroyed now rather than lingering.
    if (command === "destroy" && this.inbox.pendingCount() > 0) this.startDraining();
    return { ok: true, agent: result.agent };
  }

  /** A user turn: admission, per-agent turn limit, deterministic runKey, inbox. */
  async submitTurn(turn: TurnInput): Promise<Result<{ runKey: string; outcome: EnqueueOutcome["status"]; stream: ReadableStream<Uint8Array> | null }>> {
    const admitted = this.profile.admit();
    if (!admitted.ok) return admitted;
    const agentId = admitted.agent.id;
    const runKey = runKeys.userInitiated(agentId, turn.sessionId, turn.turnId);
    if (!this.inbox.getRun(runKey)) {
      // Brakes (helper "brakes"): a new turn is refused while an agent-wide brake covers the agent; a retry of an accepted one is not.
      const brake = await this.governor.brakeOnWake(admitted.agent);
      if (brake) return failure("brake_engaged", `brake ${brake.brakeId} (${brake.behaviour}) stops new wakes of this agent; release it with POST /v1/brakes/${brake.brakeId}/release`);
      const perMinute = rateLimitsFrom(this.env.VIGIL_RATE_LIMITS).turnsPerMinutePerAgent;
      const limit = consumeCounter(this.db, rateLimitKeys.agentTurns(agentId), perMinute, 60_000);
      if (!limit.allowed) {
        return { ok: false, code: "rate_limited", message: `this agent accepts ${perMinute} turns per minute; retry in ${limit.retryAfterSeconds}s`, retryAfterSeconds: limit.retryAfterSeconds };
      }
    }
    // Subscribe before enqueueing so the stream cannot miss the run's first events.
    const stream = turn.stream ? this.log.subscribe(0, { runKey, closeOn: ["run.completed", "run.failed"] }) : null;
    const outcome = this.inbox.enqueue({
      runKey,
      reason: "userInitiated",
      threadId: threadIds.interactive(agentId, turn.sessionId),
      authority: turn.authority,
      input: { text: turn.text, sessionId: turn.sessionId, turnId: turn.turnId },
    });
    this.startDraining();
    return { ok: true, runKey, outcome: outcome.status, stream };
  }

  /**
   * Any other wake (manual, queue-delivered). Duplicates of a known runKey are acknowledged and
   * dropped; a wake for a dormant or destroyed agent is recorded and settles as skipped.
   */
  async enqueueWake(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const outcome = this.inbox.enqueue(job);
    this.startDraining();
    return { ok: true, ...outcome };
  }

  /** `eventSeq`: the event log position this page is consistent with (read in the same turn), so a reader resumes /events there without gap or duplicate. */
  async listMessages(query: { limit: number; cursor?: string | undefined; threadId?: string | undefined }): Promise<Result<Page<Message> & { eventSeq: number }>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const before = decodeCursor(query.cursor, z.object({ s: z.number().int() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.history.list({ threadId: query.threadId, beforeSeq: before?.s, limit: query.limit });
    return { ok: true, data: page.data, nextCursor: page.lastSeq === null ? null : encodeCursor({ s: page.lastSeq }), eventSeq: this.log.headSeq() };
  }

  async listRuns(query: { limit: number; cursor?: string | undefined }): Promise<Result<Page<Run>>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const before = decodeCursor(query.cursor, z.object({ e: z.string(), k: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.inbox.listRuns(query.limit, before ? { enqueuedAt: before.e, runKey: before.k } : undefined);
    return { ok: true, data: this.runView.summaries(page.data), nextCursor: page.last ? encodeCursor({ e: page.last.enqueuedAt, k: page.last.runKey }) : null };
  }

  async getRun(runKey: string): Promise<Result<{ run: Run }>> {
    const run = this.profile.get() ? this.inbox.getRun(runKey) : null;
    return run ? { ok: true, run: this.runView.detail(run) } : failure("not_found", "run not found");
  }

  /** Brakes (helper "brakes"): the brake that would refuse a new API wake of this agent now, or null. */
  async wakeBrake(): Promise<{ brakeId: string; behaviour: string } | null> {
    const agent = this.profile.get();
    return agent ? this.governor.brakeOnWake(agent) : null;
  }

  /** `GET /v1/agents/:id/usage`: one tenant-local day (today by default) against the budgets and quotas in force. */
  async getUsage(day?: string): Promise<Result<{ usage: AgentUsage }>> {
    const agent = this.profile.get();
    if (!agent) return failure("not_found", "agent not found");
    return { ok: true, usage: await this.governor.usageView(agent, day) };
  }

  listReports(query: ListReportsQuery): Result<Page<Report>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    return this.reports.list(query);
  }

  /** A scope's head report with freshness; `nowMs` (the freshness clock) is a test seam honoured only with VIGIL_FAULTS=enabled. */
  getReportHead(scope: string, nowMs?: number): Result<{ report: ReportHeadView }> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    if (!isReportScope(scope)) return failure("validation_failed", `scope must be one of current, daily, weekly, monthly`);
    return this.reports.headView(scope, this.env.VIGIL_FAULTS === "enabled" && nowMs !== undefined ? nowMs : Date.now());
  }

  /** Slots with versions, and message/summary counts (SPEC §7). */
  getMemory(): Result<{ memory: MemoryView }> {
    return readMemory(this.db, this.profile);
  }

  updateSlot(key: string, value: unknown, expectedVersion?: number): SlotWrite {
    return writeSlot(this.profile, this.log, key, value, expectedVersion);
  }

  /** FTS5 recall over the agent's own messages, best first. */
  searchMemory(query: string, limit: number): Result<{ hits: RecallHit[] }> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const hits = searchMessages(this.db, query, { limit });
    return hits ? { ok: true, hits } : failure("validation_failed", "q must contain at least one letter or digit");
  }

  /** Everything the agent holds, as a lazily paged JSON stream. */
  exportData(): Result<{ stream: ReadableStream<Uint8Array> }> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    return { ok: true, stream: exportStream(this.db, this.profile) };
  }

  listEvents(after: number, limit: number): AgentEvent[] {
    return this.log.listAfter(after, limit);
  }

  /** SSE body: replay after `after`, then live. */
  openEvents(after: number): Result<{ stream: ReadableStream<Uint8Array> }> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    return { ok: true, stream: this.log.subscribe(after) };
  }

  /** Bench seam (VIGIL_BENCH=enabled only): measurement loops run inside the DO. */
  async benchOp(op: BenchOp): Promise<Result<{ done: number }>> {
    if (this.env.VIGIL_BENCH !== "enabled") return failure("not_found", "no such route");
    return runBenchOp(this.db, this.history, op, {
      assemble: (threadId) => void this.memoryContext.modelMessages(threadId, ""),
      afterAppend: async (threadId) => {
        if (this.compaction.plan(threadId) > 0) await this.compaction.pump();
      },
      catchUp: async (threadId) => {
        this.compaction.plan(threadId);
        return (await this.compaction.pump()).committed;
      },
    });
  }

  /** Test seam (VIGIL_FAULTS=enabled only): every row of every SQLite table. */
  async debugDumpTables(): Promise<Result<{ tables: TableDump }>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    return { ok: true, tables: await dumpTables(this.ctx.storage) };
  }

  /** "Maybe compact" (SPEC §3): plans and works off compaction jobs on a macrotask, never on the reply path. */
  private maybeCompact(threadId: string | null): void {
    const work = new Promise((resolve) => setTimeout(resolve, 0))
      .then(() => {
        if (threadId !== null) this.compaction.plan(threadId);
        return this.compaction.pump();
      })
      .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "compaction failed", error: String(error) })));
    this.ctx.waitUntil(work);
  }

  /** Agents SDK schedule callback: a compaction retry came due. */
  async onCompactionAlarm(): Promise<void> {
    this.maybeCompact(null);
  }

  private async armCompactionAlarm(atMs: number): Promise<void> {
    const existing = this.getSchedules().filter((row) => row.callback === "onCompactionAlarm");
    if (existing.some((row) => row.time * 1000 <= atMs)) return;
    for (const row of existing) await this.cancelSchedule(row.id);
    await this.schedule(new Date(atMs), "onCompactionAlarm");
  }

  /** `POST …/memory/compaction/retry`: requeues every failed_terminal compaction job (seed 000: "retried manually") and works them off in the background. */
  retryCompaction(): Result<{ requeued: number }> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const requeued = this.compaction.requeueFailed();
    if (requeued > 0) this.maybeCompact(null);
    return { ok: true, requeued };
  }

  /** Test seam (VIGIL_FAULTS=enabled only): plans the thread (if given) and works off due jobs as if the clock read `nowMs`. */
  async compactNow(threadId: string | null, nowMs?: number): Promise<Result<{ committed: number; failed: number; nextAttemptAt: number | null }>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    this.compaction.clock = nowMs === undefined ? null : () => nowMs;
    try {
      if (threadId !== null) this.compaction.plan(threadId);
      return { ok: true, ...(await this.compaction.pump(10_000)) };
    } finally {
      this.compaction.clock = null;
    }
  }

  /** Agents SDK schedule callback: the soft-delete window may have passed. Runs after the SDK has settled its schedule row, since erasure deletes that table too. */
  async onErasureDue(): Promise<void> {
    this.ctx.waitUntil(
      new Promise((resolve) => setTimeout(resolve, 0))
        .then(() => this.erasure.eraseIfDue())
        .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "erasure failed", error: String(error) }))),
    );
  }

  /** Tenant erasure: this agent's whole SQLite goes, whatever its lifecycle. */
  async eraseForTenant(): Promise<Result<{ receipt: ErasureReceipt }>> {
    return this.erasure.erase("tenant_erased");
  }

  /** Test seam (VIGIL_FAULTS=enabled only): erases a destroyed agent now instead of after the soft-delete window. */
  async forceErasure(): Promise<Result<{ receipt: ErasureReceipt | null }>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    return this.erasure.eraseIfDue(true);
  }

  /** Test seam; refused unless VIGIL_FAULTS=enabled. */
  armFault(point: string, times = 1): boolean {
    return this.faults.arm(point, times);
  }

  createTimer(body: CreateTimerBody): Promise<Result<{ timer: Timer }>> {
    return this.timers.create(body);
  }

  listTimers(query: ListTimersQuery): Result<Page<Timer>> {
    return this.timers.list(query);
  }

  deleteTimer(timerId: string): Promise<Result<{ timer: Timer }>> {
    return this.timers.delete(timerId);
  }

  /** Runs a timer now (reason manual); `requestId` is the Idempotency-Key or a random id. */
  triggerTimer(timerId: string, requestId: string): Result<{ runKey: string; outcome: EnqueueOutcome["status"] }> {
    return this.timers.trigger(timerId, requestId);
  }

  /** Agents SDK schedule callback (the timers keep one schedule, at the earliest nextRunAt). */
  async onTimerAlarm(): Promise<void> {
    await this.timers.runDue();
  }

  /** Test seam (VIGIL_FAULTS=enabled only): one timer tick as if the clock read `nowMs`. */
  async tickTimers(nowMs: number): Promise<Result<TickOutcome>> {
    if (this.env.VIGIL_FAULTS !== "enabled") return failure("not_found", "no such method");
    return { ok: true, ...(await this.timers.runDue(nowMs)) };
  }

  /** Test seam (VIGIL_FAULTS=enabled only): freezes the timers' clock at `nowMs` (null: real time, re-arm). */
  async setTimerClock(nowMs: number | null): Promise<boolean> {
    if (this.env.VIGIL_FAULTS !== "enabled") return false;
    await this.timers.setClock(nowMs);
    return true;
  }

  /**
   * Delegation: creates this agent as a spawned child (idempotent — the same spawn operation finds the
   * child it created) and enqueues its delegated wake; arms the lineage TTL.
   */
  async createChildAgent(tenantId: string, agentId: string, body: CreateAgentBody, lineage: AgentLineage, wake: ChildWake): Promise<Result<{ agent: Agent }>> {
    const existing = this.profile.get();
    if (existing && existing.config.lineage?.spawnOperationId !== lineage.spawnOperationId) return failure("conflict", `agent ${agentId} already exists`);
    if (!existing) {
      const created = this.profile.create(tenantId, agentId, body, lineage);
      if (!created.ok) return created;
      if (lineage.expiresAt) await this.schedule(new Date(lineage.expiresAt), "expireLineage", undefined);
    }
    const agent = this.profile.get()!;
    await this.syncDirectory(tenantId, agent);
    const woke = await this.enqueueWake({ tenantId, agentId, ...wake });
    return woke.ok ? { ok: true, agent } : woke;
  }

  /** Delegation: one of this agent's children reports its delegated run; the answer is a `child` wake. */
  async receiveChildReport(report: ChildReport): Promise<Result<{ runKey: string }>> {
    const agent = this.profile.get();
    if (!agent) return failure("not_found", "agent not found");
    const received = this.spawner.receiveReport(agent, report, (runKey) => this.inbox.getRun(runKey)?.threadId ?? null);
    if (!received.ok) return received;
    const woke = await this.enqueueWake({ tenantId: this.tenantId(), agentId: agent.id, ...received.wake });
    return woke.ok ? { ok: true, runKey: received.wake.runKey } : woke;
  }

  /** Agents SDK schedule callback: a child past its TTL is destroyed (its delegated run, if unfinished, reports as skipped). */
  async expireLineage(): Promise<void> {
    const agent = this.profile.get();
    const expiresAt = agent?.config.lineage?.expiresAt;
    if (!agent || agent.lifecycle === "destroyed" || !expiresAt || Date.parse(expiresAt) > Date.now()) return;
    await this.applyLifecycle("destroy");
    await this.childReports.flush();
  }

  /** Saga phase 2 (safe to call any number of times). */
  /** The tool saga's approval outcome (JSON text of `ApprovalState`), before phase 1; safe to repeat. */
  async recordApproval(operationId: string, outcome: string): Promise<Result<{ recorded: boolean; refusal: string | null }>> {
    return this.sagas.recordApproval(operationId, JSON.parse(outcome) as ApprovalState);
  }

  async recordToolResult(operationId: string, result: ToolResultEnvelope): Promise<Result<{ resumed: boolean }>> {
    return this.sagas.record(operationId, result);
  }

  /** Wakes the drain after a restart even if no request arrives (Agent SDK schedule → DO alarm), and re-drives sagas. */
  async watchdog(): Promise<void> {
    await this.sagas.recover();
    if (this.inbox.pendingCount() > 0) this.startDraining();
    await this.childReports.flush();
  }

  async recoverSagas(): Promise<number> {
    return this.sagas.recover();
  }

  /** The tenant's registered HTTP tools, as the gate and the model see them. */
  private async tenantHttpTools(): Promise<HttpToolGate[]> {
    const listings = await tenantStub(this.env, this.tenantId()).listTools();
    return listings.filter((listing) => listing.kind === "http").map(httpToolGate);
  }

  private startDraining(): void {
    // Start on a macrotask: a builtin-model run is all microtasks, and would otherwise hold back the
    // caller's 202 until the run had finished.
    const drained = new Promise((resolve) => setTimeout(resolve, 0)).then(() => this.loop.kick()).catch((error: unknown) => {
      // An injected crash leaves the run mid-flight on purpose; the watchdog or the next call resumes it.
      if (!(error instanceof InjectedCrash)) console.error(JSON.stringify({ level: "error", msg: "drain failed", error: String(error) }));
    });
    this.ctx.waitUntil(drained);
    void this.schedule(config.run.watchdogSeconds, "watchdog", undefined, { idempotent: true }).catch(() => undefined);
  }

  private tenantId(): string {
    return this.db.select({ tenantId: schema.agentMeta.tenantId }).from(schema.agentMeta).get()?.tenantId ?? "";
  }

  private async syncDirectory(tenantId: string, agent: Agent): Promise<void> {
    await tenantStub(this.env, tenantId).upsertAgentDirectory(agent, agent.config.lineage?.parentId ?? null);
  }
}
