import { rateLimitsFrom } from "../../config";
import { DEFAULT_COMPACTION_RETRY_POLICY } from "../../core/compaction-job";
import * as schema from "../../db/agent-schema";
import type { Env } from "../../env";
import { completeText } from "../../gateway/complete-text";
import { agentModelGateway } from "../../gateway/model-gateway";
import type { Agent } from "../../schema/agents";
import migrations from "../../../migrations/agent";
import { FaultSeam } from "../faults";
import { openDatabase } from "../sqlite";
import { agentStub, tenantStub } from "../stubs";
import { ActionStore } from "./actions";
import { AgentLifecycle } from "./agent-lifecycle";
import { armWatchdog, type AgentScheduler } from "./agent-schedule";
import { ApprovalGate } from "./approval-gate";
import { logFailure } from "./background";
import { MeteredRunTrace, RunGovernor } from "./budgets";
import { ChildReports } from "./child-report";
import { ChildrenStore } from "./children";
import { Compaction } from "./compaction";
import { CompactionDriver } from "./compaction-driver";
import { MemoryContext } from "./context";
import { Delegation } from "./delegation";
import { Drainer } from "./drain";
import { AgentErasure } from "./erasure";
import { EventForwarder } from "./event-forwarder";
import { EventLog } from "./event-log";
import { History } from "./history";
import { tenantHttpTools } from "./http-tools";
import { AgentProfile } from "./profile";
import { searchMessages } from "./recall";
import { Reports } from "./reports";
import { InjectedCrash, RunLoop } from "./run-loop";
import { RunView } from "./run-view";
import { Sagas } from "./sagas";
import { Sessions } from "./sessions";
import { Spawner } from "./spawn";
import { Summarizer } from "./summarizer";
import { TimerAlarm } from "./timer-alarm";
import { Timers } from "./timers";
import { ToolRunner } from "./tool-runner";
import type { AgentDb } from "./types";
import { UsageStore } from "./usage-store";
import { WakeAdmission } from "./wake-admission";
import { WakeInbox } from "./wake-inbox";
import { H } from "../../core/hash";

/** The parts of one agent the RPC surface delegates to; the rest are wired together inside `buildAgentParts`. */
export interface AgentParts {
  db: AgentDb;
  events: EventLog;
  profile: AgentProfile;
  history: History;
  inbox: WakeInbox;
  faults: FaultSeam;
  reports: Reports;
  timers: Timers;
  sagas: Sagas;
  /** Brakes, daily budgets, tool quotas and tool rate limits. */
  governor: RunGovernor;
  /** The run record completed for GET …/runs (tool calls, trace rows, lineage). */
  runView: RunView;
  /** As a child: the outbox of delegated-run reports to the parent. */
  childReports: ChildReports;
  compaction: Compaction;
  /** When compaction runs (after runs, on its alarm, on manual retry, or now as a test seam). */
  compactor: CompactionDriver;
  memoryContext: MemoryContext;
  erasure: AgentErasure;
  drain: Drainer;
  lifecycle: AgentLifecycle;
  wakes: WakeAdmission;
  delegation: Delegation;
  /** Interactive sessions: inactivity TTL and explicit close. */
  sessions: Sessions;
  /** The owning tenant, as stored with the profile ("" before the agent exists). */
  tenantId(): string;
}

/** Wires one agent's parts to its own SQLite, its tenant, other agents and the SDK scheduler. */
export function buildAgentParts(ctx: DurableObjectState, env: Env, scheduler: AgentScheduler): AgentParts {
  // Work interrupted by a restart or eviction resumes on the first activation afterwards (after this function returns).
  const db = openDatabase(ctx, schema, migrations, () => {
    if (inbox.pendingCount() > 0) drain.start();
    // Timer slots missed while the object slept are caught up on activation.
    timers.catchUp();
    // Events a flush did not get to before the object stopped reach the tenant stream now.
    forwarder.schedule();
    // Compaction interrupted by a restart counts as a failed attempt and resumes off the request path.
    compaction.recover();
    compactionDriver.maybeCompact(null);
  });
  const waitUntil = (work: Promise<unknown>) => ctx.waitUntil(work);
  const tenantId = () => db.select({ tenantId: schema.agentMeta.tenantId }).from(schema.agentMeta).get()?.tenantId ?? "";
  const tenant = () => tenantStub(env, tenantId());
  const agentId = () => profile.get()?.id ?? "";
  const threadOfRun = (runKey: string) => inbox.getRun(runKey)?.threadId ?? runKey;
  const httpTools = () => tenantHttpTools(tenant());
  const upsertDirectory = async (owner: string, agent: Agent) => {
    await tenantStub(env, owner).upsertAgentDirectory(agent, agent.config.lineage?.parentId ?? null);
  };

  const log = new EventLog(db);
  const forwarder = new EventForwarder({ db, agentId, send: (id, events) => tenant().recordAgentEvents(id, events), waitUntil });
  log.onPersisted((type) => forwarder.noteAppended(type));
  const profile = new AgentProfile(db, log);
  const history = new History(db, log, agentId);
  const inbox = new WakeInbox(db, log);
  const faults = new FaultSeam(env.VIGIL_FAULTS === "enabled", (point) => new InjectedCrash(`injected crash at ${point}`));
  const actions = new ActionStore(db);
  const runTrace = new MeteredRunTrace(db, (entry) => governor.recordModelUsage(entry));
  const governor = new RunGovernor({
    db,
    usage: new UsageStore(db),
    trace: runTrace,
    governanceFor: (agent) => tenant().governanceFor(agent),
    defaultToolRatePerMinute: rateLimitsFrom(env.VIGIL_RATE_LIMITS).callsPerMinutePerAgentTool,
  });
  const reports = new Reports(db, agentId);
  const children = new ChildrenStore(db);
  const runView = new RunView(db, runTrace, children);
  const spawner = new Spawner({
    db,
    trace: runTrace,
    children,
    context: (parent) => tenant().delegationContext({ agentId: parent.id, kind: parent.kind }),
    recordDecision: (decision) => ctx.waitUntil(tenant().recordSpawnDecision(decision).catch(() => undefined)),
    createChild: (childId, body, lineage, wake) => agentStub(env, tenantId(), childId).createChildAgent(tenantId(), childId, body, lineage, wake),
    now: () => Date.now(),
  });
  const childReports = new ChildReports({
    db,
    profile,
    history,
    deliver: (parentId, report) => agentStub(env, tenantId(), parentId).receiveChildReport(report),
    applyLifecycle: (command) => lifecycle.apply(command),
    retryLater: () => armWatchdog(scheduler),
  });
  const summarizer = new Summarizer(DEFAULT_COMPACTION_RETRY_POLICY, async ({ system, prompt }) => {
    const agent = profile.get()!;
    // Summary calls are metered like run steps (their usage counts toward the day's budget) under a key of their own.
    const traceKey = `compaction:${H(system, prompt)}`;
    // A spent budget or a brake is the seed's "budget gate": the summary takes the extractive path.
    const halt = await governor.check(agent, traceKey, "step");
    if (halt) throw Object.assign(new Error(halt.code), { code: halt.code });
    const output = await completeText({ env, grants: tenant(), agent, purpose: "compaction", system, messages: [{ role: "user", content: prompt }], trace: { runKey: traceKey, sink: runTrace } });
    return output.text;
  });
  const compaction = new Compaction({
    db,
    history,
    profile,
    events: log,
    summarize: (request) => summarizer.summarize(request),
    scheduleRetry: (atMs) => compactionDriver.retryAt(atMs),
    fault: (point) => faults.hit(point),
  });
  const compactionDriver = new CompactionDriver({ compaction, scheduler, waitUntil });
  const memoryContext = new MemoryContext(db, profile, reports, compaction);
  const erasure = new AgentErasure({
    ctx,
    db,
    migrations,
    profile,
    tenantId,
    reportErased: (receipt) => tenantStub(env, receipt.tenantId).recordAgentErased(receipt),
    schedule: (when, callback) => scheduler.schedule(when, callback, { idempotent: true }),
  });
  const tools: ToolRunner = new ToolRunner({
    actions,
    history,
    events: log,
    agentTools: {
      profile,
      events: log,
      reports,
      recall: (query, options) => searchMessages(db, query, options),
      extensionSlots: () => governor.extensionSlots(profile.get()!),
      threadOfRun,
      openQuestion: (request) => tenant().openQuestion({ ...request, agentId: profile.get()!.id, threadId: inbox.getRun(request.runKey)?.threadId }),
    },
    executeTenantTool: (invocation) => tenant().executeTool(invocation),
    startSaga: (invocation, approval) => sagas.start(invocation, approval),
    approvalFor: (context, action, tool, confidence) => approvalGate.check(context, action, tool, confidence),
    threadOfRun,
    tenantTools: httpTools,
    spawn: (context, action) => spawner.execute(context.agent, action, context.reason),
    gateTool: (context, action, mutating) => governor.gateTool(context.agent, action, mutating),
  });
  const approvalGate = new ApprovalGate({ events: log, trace: runTrace, request: (request) => tenant().requestToolApproval(request) });
  const sagas: Sagas = new Sagas({
    env,
    db,
    events: log,
    trace: runTrace,
    actions,
    tools,
    inbox,
    tenantId,
    agentId,
    takeFaults: () => faults.take("saga."),
    resume: () => drain.start(),
  });
  const loop = new RunLoop({
    events: log,
    trace: runTrace,
    governor,
    profile,
    history,
    inbox,
    actions,
    tools,
    model: agentModelGateway({ env, grants: tenant, trace: runTrace }),
    fault: (point) => faults.hit(point),
    memoryContext: (threadId, runKey) => memoryContext.modelMessages(threadId, runKey),
    afterRun: (threadId) => compactionDriver.maybeCompact(threadId),
    httpTools,
    announce: (activity) => {
      const agent = profile.get();
      if (!agent) return;
      const sent = tenant()
        .recordAgentActivity({ id: agent.id, kind: agent.kind, lifecycle: agent.lifecycle }, activity)
        .catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "agent activity notification failed", agentId: agent.id, error: String(error) })));
      ctx.waitUntil(sent);
    },
    runEnded: (run) => {
      if (childReports.onRunEnded(run)) ctx.waitUntil(childReports.flush());
    },
    recordOutcome: (outcome) => {
      const owner = tenantId();
      if (!owner) return;
      ctx.waitUntil(tenantStub(env, owner).recordRunOutcome(outcome).catch((error: unknown) => logFailure("run outcome metrics failed", error)));
    },
  });
  const drain = new Drainer({ kick: () => loop.kick(), waitUntil, armWatchdog: () => armWatchdog(scheduler) });
  const timers = new Timers({ db, profile, inbox, alarm: new TimerAlarm(scheduler), kick: () => drain.start() });
  const lifecycle = new AgentLifecycle({ profile, timers, erasure, inbox, drain, tenantId, upsertDirectory });
  const sessions = new Sessions({ db, events: log, scheduler });
  const wakes = new WakeAdmission({ db, events: log, profile, inbox, governor, drain, sessions, turnsPerMinute: () => rateLimitsFrom(env.VIGIL_RATE_LIMITS).turnsPerMinutePerAgent });
  const delegation = new Delegation({ profile, inbox, spawner, childReports, lifecycle, wakes, scheduler, tenantId });
  return {
    db,
    events: log,
    profile,
    history,
    inbox,
    faults,
    reports,
    timers,
    sagas,
    governor,
    runView,
    childReports,
    compaction,
    compactor: compactionDriver,
    memoryContext,
    erasure,
    drain,
    lifecycle,
    wakes,
    delegation,
    sessions,
    tenantId,
  };
}
