import { Agent as AgentBase } from "agents";
import { config, rateLimitsFrom } from "../../config";
import type { LifecycleCommand } from "../../core/lifecycle";
import { rateLimitKeys } from "../../core/rate-limit";
import { runKeys, threadIds } from "../../core/run-keys";
import * as schema from "../../db/agent-schema";
import type { Env } from "../../env";
import { tenantStub } from "../stubs";
import { failure, type Result } from "../../http/error-codes";
import migrations from "../../../migrations/agent";
import { resolveModel } from "../../model/resolve";
import type { Agent, AgentState, CreateAgentBody, PatchAgentBody } from "../../schema/agents";
import { decodeCursor, encodeCursor, type Page } from "../../schema/common";
import type { Authority, Message } from "../../schema/messages";
import type { AgentEvent, Run } from "../../schema/runs";
import type { WakeJob } from "../../schema/wake";
import { z } from "zod";
import { consumeCounter } from "../counters";
import { FaultSeam } from "../faults";
import { openDatabase } from "../sqlite";
import { EventLog } from "./event-log";
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
import { Sagas } from "./sagas";
import { httpToolGate, type HttpToolGate } from "./http-tools";
import type { ToolResultEnvelope } from "../../core/tool-envelopes";
import { InjectedCrash, RunLoop } from "./run-loop";
import { RunTrace } from "./run-trace";
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
  private readonly runTrace: RunTrace;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Work interrupted by a restart or eviction resumes on the first activation afterwards.
    this.db = openDatabase(ctx, schema, migrations, () => {
      if (this.inbox.pendingCount() > 0) this.startDraining();
      // Timer slots missed while the object slept are caught up on activation.
      this.timers.catchUp();
    });
    this.log = new EventLog(this.db);
    this.profile = new AgentProfile(this.db, this.log);
    this.history = new History(this.db, this.log, () => this.profile.get()?.id ?? "");
    this.inbox = new WakeInbox(this.db, this.log);
    this.faults = new FaultSeam(env.VIGIL_FAULTS === "enabled", (point) => new InjectedCrash(`injected crash at ${point}`));
    this.actions = new ActionStore(this.db);
    this.runTrace = new RunTrace(this.db);
    this.reports = new Reports(this.db, () => this.profile.get()?.id ?? "");
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
      startSaga: (invocation) => this.sagas.start(invocation),
      threadOfRun: (runKey) => this.inbox.getRun(runKey)?.threadId ?? runKey,
      tenantTools: () => this.tenantHttpTools(),
    });
    this.sagas = new Sagas({
      env,
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
      profile: this.profile,
      history: this.history,
      inbox: this.inbox,
      actions: this.actions,
      tools: this.tools,
      resolveModel,
      fault: (point) => this.faults.hit(point),
      httpTools: () => this.tenantHttpTools(),
      announce: (activity) => {
        const agent = this.profile.get();
        if (!agent) return;
        const sent = tenantStub(this.env, this.tenantId())
          .recordAgentActivity({ id: agent.id, kind: agent.kind, lifecycle: agent.lifecycle }, activity)
          .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "agent activity notification failed", agentId: agent.id, error: String(error) })));
        this.ctx.waitUntil(sent);
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

  async listMessages(query: { limit: number; cursor?: string | undefined; threadId?: string | undefined }): Promise<Result<Page<Message>>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const before = decodeCursor(query.cursor, z.object({ s: z.number().int() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.history.list({ threadId: query.threadId, beforeSeq: before?.s, limit: query.limit });
    return { ok: true, data: page.data, nextCursor: page.lastSeq === null ? null : encodeCursor({ s: page.lastSeq }) };
  }

  async listRuns(query: { limit: number; cursor?: string | undefined }): Promise<Result<Page<Run>>> {
    if (!this.profile.get()) return failure("not_found", "agent not found");
    const before = decodeCursor(query.cursor, z.object({ e: z.string(), k: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const page = this.inbox.listRuns(query.limit, before ? { enqueuedAt: before.e, runKey: before.k } : undefined);
    return { ok: true, data: page.data, nextCursor: page.last ? encodeCursor({ e: page.last.enqueuedAt, k: page.last.runKey }) : null };
  }

  async getRun(runKey: string): Promise<Result<{ run: Run }>> {
    const run = this.profile.get() ? this.inbox.getRun(runKey) : null;
    return run ? { ok: true, run: { ...run, trace: { ...run.trace, ...this.runTrace.view(runKey) } } } : failure("not_found", "run not found");
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
  benchOp(op: BenchOp): Result<{ done: number }> {
    if (this.env.VIGIL_BENCH !== "enabled") return failure("not_found", "no such route");
    return runBenchOp(this.db, this.history, op);
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

  /** Saga phase 2 (safe to call any number of times). */
  async recordToolResult(operationId: string, result: ToolResultEnvelope): Promise<Result<{ resumed: boolean }>> {
    return this.sagas.record(operationId, result);
  }

  /** Wakes the drain after a restart even if no request arrives (Agent SDK schedule → DO alarm), and re-drives sagas. */
  async watchdog(): Promise<void> {
    await this.sagas.recover();
    if (this.inbox.pendingCount() > 0) this.startDraining();
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
    await tenantStub(this.env, tenantId).upsertAgentDirectory(agent);
  }
}
