import { config, rateLimitsFrom } from "../../config";
import { DEFAULT_COMPACTION_RETRY_POLICY } from "../../core/memory/compaction-job";
import * as schema from "../../db/agent-schema";
import type { Env } from "../../env";
import { agentModelGateway } from "../../gateway/model-gateway";
import type { Agent } from "../../schema/agents/agents";
import migrations from "../../../migrations/agent";
import { FaultSeam, InjectedCrash } from "../shared/seams";
import { runHooks, type Hook } from "../shared/hooks";
import { logFailure } from "../shared/background";
import { AgentActivation } from "./activation";
import { openDatabase } from "../shared/sqlite";
import { AgentRetention, EventForwarder, EventLog } from "./events";
import { agentStub, tenantStub } from "../shared/stubs";
import { ActionStore, tenantHttpTools, type ApprovalGate, type Sagas, type ToolRunner } from "./tools";
import { wireToolParts } from "./tool-wiring";
import { AgentLifecycle, Watchdog, type AgentScheduler, AgentErasure, AgentProfile } from "./lifecycle";
import { MeteredRunTrace, RunGovernor, RunLoop, type RunLoopDeps, RunTelemetry, RunView, UsageStore } from "./runs";
import { ChildReports, ChildrenStore, Delegation, Spawner } from "./delegation";
import { Compaction, CompactionDriver, Summarizer, summaryModelCall } from "./compaction";
import { MemoryContext, History, Reports } from "./memory";
import { Drainer, Interrupts, Sessions, WakeAdmission, WakeDelivery, WakeInbox } from "./wakes";
import { TimerAlarm, Timers } from "./timers";
import { deploymentMode } from "../../core/egress/deployment-mode";
import type { AgentDb } from "./types";
import { seamOn } from "../../core/runtime/seams";
import { TenantSnapshotCache } from "./runs";

/**
 * One agent's parts, wired to its own SQLite, its tenant, other agents and the SDK scheduler. Every
 * part is a named field built with explicit arguments, in dependency order; the few calls that must
 * reach a part built later (cycles in the runtime: trace ↔ governor, runner ↔ sagas (./tool-wiring.ts) ↔ drain ↔ loop,
 * compaction ↔ its driver, child reports ↔ lifecycle) go through `this.<part>` and are listed as
 * "back-edge" where they occur. Activation and watchdog work are the named hooks at the end.
 */
export class AgentWiring {
  readonly db: AgentDb;
  readonly events: EventLog;
  /** Retention of the event log and finished compaction jobs (issue 12 §5). */
  readonly retention: AgentRetention;
  readonly forwarder: EventForwarder;
  /** The tenant's policy, brakes, limits and HTTP tools as this agent keeps them (issue 12 §2). */
  readonly snapshot: TenantSnapshotCache;
  readonly profile: AgentProfile;
  readonly history: History;
  readonly inbox: WakeInbox;
  readonly faults: FaultSeam;
  readonly actions: ActionStore;
  /** Double texting `interrupt`: marks runs to stop at their next step boundary and releases their open approvals. */
  readonly interrupts: Interrupts;
  readonly runTrace: MeteredRunTrace;
  readonly governor: RunGovernor;
  readonly reports: Reports;
  readonly children: ChildrenStore;
  readonly runView: RunView;
  /** OpenTelemetry export of finished runs, off the run's path (issue 15). */
  readonly telemetry: RunTelemetry;
  readonly spawner: Spawner;
  readonly childReports: ChildReports;
  readonly summarizer: Summarizer;
  readonly compaction: Compaction;
  readonly compactor: CompactionDriver;
  readonly memoryContext: MemoryContext;
  readonly erasure: AgentErasure;
  readonly approvalGate: ApprovalGate;
  readonly tools: ToolRunner;
  readonly sagas: Sagas;
  readonly loop: RunLoop;
  readonly drain: Drainer;
  readonly timers: Timers;
  readonly lifecycle: AgentLifecycle;
  /** Interactive sessions: inactivity TTL and explicit close. */
  readonly sessions: Sessions;
  readonly wakes: WakeAdmission;
  /** The wake consumer's delivery: drained inline, watched only while something is still open (./wakes/delivery.ts). */
  readonly delivery: WakeDelivery;
  readonly delegation: Delegation;
  /** The watchdog schedule, with the row it armed remembered (issue 12 §8). */
  readonly watchdog: Watchdog;
  /** What an activation resumes (./activation.ts). */
  readonly activation: AgentActivation;
  readonly onStart: Hook[];
  readonly onWatchdog: Hook[];

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly scheduler: AgentScheduler,
  ) {
    // Work interrupted by a restart or eviction resumes on the first activation afterwards (the onStart hooks, after migrations).
    this.watchdog = new Watchdog(this.scheduler);
    const activate = () => runHooks(this.onStart);
    this.db = openDatabase(this.ctx, schema, migrations, activate);
    this.events = new EventLog(this.db, () => this.agentId());
    this.retention = new AgentRetention({
      db: this.db,
      scheduler: this.scheduler,
      policy: () => this.tenant().retentionPolicy(),
      exists: () => this.profile.get() !== null,
    });
    this.snapshot = new TenantSnapshotCache({
      db: this.db,
      load: (agent) => this.tenant().agentSnapshot(agent),
      maxAgeMs: config.snapshot.maxAgeSeconds * 1_000,
    });
    this.faults = new FaultSeam(seamOn(this.env, "faults"), (point) => new InjectedCrash(`injected crash at ${point}`));
    this.forwarder = new EventForwarder({
      db: this.db,
      agentId: () => this.agentId(),
      tenantId: () => this.tenantId(),
      send: (id, report) => this.tenant().reportRun(id, report),
      waitUntil: (work) => this.ctx.waitUntil(work),
      // back-edge: the loop and the inbox are built below.
      holding: () => this.loop.busy || this.inbox.next() !== null,
      onSnapshotVersion: (version) => this.snapshot.noteVersion(version),
      cut: (point) => {
        if (!this.faults.consume(point)) return false;
        this.ctx.abort(`injected crash at ${point}`);
        return true;
      },
    });
    this.profile = new AgentProfile(this.db, this.events);
    this.history = new History(this.db, this.events, () => this.agentId());
    this.inbox = new WakeInbox(this.db, this.events);
    this.actions = new ActionStore(this.db);
    this.interrupts = new Interrupts({
      inbox: this.inbox,
      actions: this.actions,
      cancelApprovals: (operationIds) => this.tenant().cancelToolApprovals(this.agentId(), operationIds),
    });
    // back-edge: metered usage reaches the governor built next.
    this.runTrace = new MeteredRunTrace(this.db, (entry) => this.governor.recordModelUsage(entry));
    /** Brakes, daily budgets, tool quotas and tool rate limits. */
    this.governor = new RunGovernor({
      db: this.db,
      usage: new UsageStore(this.db),
      trace: this.runTrace,
      governanceFor: async (agent) => (await this.snapshot.current(agent)).governance,
      defaultToolRatePerMinute: rateLimitsFrom(this.env.VIGIL_RATE_LIMITS).callsPerMinutePerAgentTool,
    });
    this.reports = new Reports(this.db, () => this.agentId());
    this.children = new ChildrenStore(this.db);
    /** The run record completed for GET …/runs (tool calls, trace rows, lineage). */
    this.runView = new RunView(this.db, this.runTrace, this.children);
    this.telemetry = new RunTelemetry({
      db: this.db,
      trace: this.runTrace,
      history: this.history,
      agent: () => this.profile.get(),
      tenantId: () => this.tenantId(),
      mode: deploymentMode(this.env.VIGIL_MODE),
      // The snapshot says whether the tenant exports at all, so an agent of a tenant without telemetry never asks.
      target: async () => {
        const { telemetry, version } = await this.tenantSnapshot();
        return { ...(telemetry ? await this.tenant().telemetryTarget() : { ok: true as const, target: null }), snapshotVersion: version };
      },
      snapshotVersion: () => this.snapshot.version(),
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    this.spawner = new Spawner({
      db: this.db,
      trace: this.runTrace,
      children: this.children,
      context: (parent) => this.tenant().delegationContext({ agentId: parent.id, kind: parent.kind }),
      recordDecision: (decision) => this.ctx.waitUntil(this.tenant().recordSpawnDecision(decision).catch(() => undefined)),
      createChild: (childId, body, lineage, wake) => agentStub(this.env, this.tenantId(), childId).createChildAgent(this.tenantId(), childId, body, lineage, wake),
      now: () => Date.now(),
    });
    /** As a child: the outbox of delegated-run reports to the parent. */
    this.childReports = new ChildReports({
      db: this.db,
      profile: this.profile,
      history: this.history,
      deliver: (parentId, report) => agentStub(this.env, this.tenantId(), parentId).receiveChildReport(report),
      // back-edge: a skipped child destroys itself through the lifecycle.
      applyLifecycle: (command) => this.lifecycle.apply(command),
      retryLater: () => this.watchdog.arm(),
    });
    this.summarizer = new Summarizer(
      DEFAULT_COMPACTION_RETRY_POLICY,
      summaryModelCall({ env: this.env, agent: () => this.profile.get()!, check: (agent, traceKey) => this.governor.check(agent, traceKey, "step"), grants: () => this.tenant(), trace: this.runTrace }),
    );
    this.compaction = new Compaction({
      db: this.db,
      history: this.history,
      profile: this.profile,
      events: this.events,
      summarize: (request) => this.summarizer.summarize(request),
      // back-edge: retries are scheduled by the driver built next.
      scheduleRetry: (atMs) => this.compactor.retryAt(atMs),
      fault: (point) => this.faults.hit(point),
      agentId: () => this.agentId(),
    });
    /** When compaction runs (after runs, on its alarm, on manual retry, or now as a test seam). */
    this.compactor = new CompactionDriver({ compaction: this.compaction, scheduler: this.scheduler, waitUntil: (work) => this.ctx.waitUntil(work) });
    this.memoryContext = new MemoryContext(this.db, this.reports, () => this.agentId());
    this.erasure = new AgentErasure({
      ctx: this.ctx,
      db: this.db,
      migrations,
      profile: this.profile,
      tenantId: () => this.tenantId(),
      reportErased: (receipt) => tenantStub(this.env, receipt.tenantId).recordAgentErased(receipt),
      schedule: (when, callback) => this.scheduler.schedule(when, callback, { idempotent: true }),
      // back-edge: the forwarder, usage and snapshot parts keep rows in memory (issue 12 §8); the whole storage just went.
      forgetRows: () => this.forgetRows(),
    });
    ({ approvalGate: this.approvalGate, tools: this.tools, sagas: this.sagas } = wireToolParts({
      env: this.env,
      db: this.db,
      events: this.events,
      history: this.history,
      profile: this.profile,
      reports: this.reports,
      governor: this.governor,
      actions: this.actions,
      inbox: this.inbox,
      trace: this.runTrace,
      spawner: this.spawner,
      faults: this.faults,
      scheduler: this.scheduler,
      tenant: () => this.tenant(),
      agentId: () => this.agentId(),
      tenantId: () => this.tenantId(),
      threadOfRun: (runKey) => this.threadOfRun(runKey),
      httpTools: () => this.httpTools(),
      // back-edge: a recorded saga result resumes the drain.
      resume: () => this.drain.start(),
    }));
    this.loop = new RunLoop({
      events: this.events,
      trace: this.runTrace,
      governor: this.governor,
      profile: this.profile,
      history: this.history,
      inbox: this.inbox,
      actions: this.actions,
      tools: this.tools,
      model: agentModelGateway({ env: this.env, grants: () => this.tenant(), trace: this.runTrace }),
      fault: (point) => this.faults.hit(point),
      atomically: (work) => this.db.transaction(() => work()),
      memoryContext: (threadId, runKey) => this.memoryContext.modelMessages(threadId, runKey, this.governor.modelVisibility()),
      afterRun: (threadId) => this.compactor.maybeCompact(threadId),
      httpTools: () => this.httpTools(),
      announce: (activity) => this.announceActivity(activity),
      runEnded: (run) => {
        if (this.childReports.onRunEnded(run)) this.ctx.waitUntil(this.childReports.flush());
        this.telemetry.onRunEnded(run);
      },
      recordOutcome: (outcome) => this.forwarder.addOutcome(outcome),
      runSettled: (runKey, parked) => {
        // A run parked on a saga reports at its end, unless it now waits for a person (their decision must show at once).
        if (!parked || this.actions.inFlight().some((action) => action.runKey === runKey && action.status === "awaiting_approval")) this.forwarder.runSettled();
      },
      interrupts: this.interrupts,
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    this.drain = new Drainer({ kick: () => this.loop.kick(), waitUntil: (work) => this.ctx.waitUntil(work), armWatchdog: () => this.watchdog.arm() });
    this.timers = new Timers({ db: this.db, profile: this.profile, inbox: this.inbox, alarm: new TimerAlarm(this.scheduler), kick: () => this.drain.start() });
    this.lifecycle = new AgentLifecycle({
      profile: this.profile,
      timers: this.timers,
      erasure: this.erasure,
      inbox: this.inbox,
      drain: this.drain,
      tenantId: () => this.tenantId(),
      upsertDirectory: (owner, agent) => this.upsertDirectory(owner, agent),
      cancelSagas: () => this.sagas.cancelAll("agent_destroyed", "the agent was destroyed and the call was cancelled"),
    });
    this.sessions = new Sessions({ db: this.db, events: this.events, scheduler: this.scheduler });
    this.wakes = new WakeAdmission({
      db: this.db,
      events: this.events,
      profile: this.profile,
      inbox: this.inbox,
      governor: this.governor,
      drain: this.drain,
      sessions: this.sessions,
      interrupts: this.interrupts,
      turnsPerMinute: () => rateLimitsFrom(this.env.VIGIL_RATE_LIMITS).turnsPerMinutePerAgent,
      confirmSnapshot: (version, atMs) => this.snapshot.confirm(version, atMs),
    });
    this.delivery = new WakeDelivery({
      admission: this.wakes, drain: this.drain, forwarder: this.forwarder, inbox: this.inbox, profile: this.profile, watchdog: this.watchdog,
      reportWaitMs: config.run.deliveryReportWaitMs,
    });
    this.delegation = new Delegation({
      profile: this.profile,
      inbox: this.inbox,
      spawner: this.spawner,
      childReports: this.childReports,
      lifecycle: this.lifecycle,
      wakes: this.wakes,
      scheduler: this.scheduler,
      tenantId: () => this.tenantId(),
    });

    /** Activation, after migrations and before the first request: work a restart or eviction interrupted resumes. */
    this.activation = new AgentActivation({
      db: this.db,
      inbox: this.inbox,
      drain: this.drain,
      sagas: this.sagas,
      timers: this.timers,
      forwarder: this.forwarder,
      compaction: this.compaction,
      compactor: this.compactor,
      retention: this.retention,
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    this.onStart = this.activation.hooks();

    /** The watchdog schedule (armed by the drain and child reports): resumes work even if no request arrives. */
    this.onWatchdog = [
      { name: "re-drive sagas", run: () => this.sagas.recover() },
      { name: "resume pending runs", run: () => this.activation.resumePendingRuns() },
      { name: "flush child reports", run: () => this.childReports.flush() },
    ];
    this.events.onPersisted((type) => this.forwarder.noteAppended(type));
  }

  /**
   * After `createAgent` made a new agent: its retention pass is scheduled now (issue 12 §5, §7; session 12). The
   * activation arms it only for an agent that exists when its object starts, and the object a create reaches started
   * before the agent existed, so the pass waited for the next activation: a busy agent never evicted had none, and the
   * first wake of every new agent paid the schedule write (with its alarm re-arm) on its cold path.
   */
  armRetentionAfterCreate(): void {
    this.ctx.waitUntil(this.retention.arm().catch((error: unknown) => logFailure("retention arm after create failed", error)));
  }

  /**
   * The owning tenant, as stored with the profile ("" before the agent exists): from the profile's own read of that
   * row, so a cold wake prepares no second `agent_meta` statement (issue 12 §7, session 12).
   */
  tenantId(): string {
    return this.profile.tenantId();
  }

  /** The agent's id from the profile's kept row (hot paths call it: every appended message, every plan); "" until the agent exists. */
  private agentId(): string {
    return this.profile.get()?.id ?? "";
  }

  /** After an erasure: every in-memory copy of a row is dropped (an erased agent may be created again in this object). */
  private forgetRows(): void {
    this.sessions.forget();
  }

  private tenant() {
    return tenantStub(this.env, this.tenantId());
  }

  private threadOfRun(runKey: string): string {
    return this.inbox.getRun(runKey)?.threadId ?? runKey;
  }

  /** The tenant's HTTP and MCP tools, from the snapshot (none before the agent exists). */
  private httpTools() {
    if (!this.profile.get()) return Promise.resolve([]);
    return tenantHttpTools({ listTools: async () => (await this.tenantSnapshot()).httpTools });
  }

  private tenantSnapshot() {
    const agent = this.profile.get();
    if (!agent) throw new Error("tenant snapshot read before the agent exists");
    return this.snapshot.current({ agentId: agent.id, kind: agent.kind });
  }

  private async upsertDirectory(owner: string, agent: Agent): Promise<void> {
    // The answer is this agent's tenant snapshot: held from creation on, its first run needs no agentSnapshot call.
    this.snapshot.apply(await tenantStub(this.env, owner).upsertAgentDirectory(agent, agent.config.lineage?.parentId ?? null));
  }

  /** Subscribers' notifications travel with the run's report (one call per run). */
  private announceActivity(activity: Parameters<RunLoopDeps["announce"]>[0]): void {
    const agent = this.profile.get();
    if (!agent) return;
    this.forwarder.addActivity({ id: agent.id, kind: agent.kind, lifecycle: agent.lifecycle }, activity);
  }
}
