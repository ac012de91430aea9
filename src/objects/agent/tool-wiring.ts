import type { Env } from "../../env";
import type { ApprovalState } from "../../schema/contracts";
import type { FaultSeam } from "../shared/seams";
import type { tenantStub } from "../shared/stubs";
import type { Spawner } from "./delegation";
import type { EventLog } from "./events";
import { armSagaWatch, disarmSagaWatch, type AgentProfile, type AgentScheduler } from "./lifecycle";
import { searchMessages, type History, type Reports } from "./memory";
import type { MeteredRunTrace, RunGovernor } from "./runs";
import { ApprovalGate, Sagas, ToolRunner, type ActionStore, type tenantHttpTools } from "./tools";
import type { AgentDb } from "./types";
import type { WakeInbox } from "./wakes";

/** What the tool side of an agent needs of the other parts and of the object (all built before it). */
export interface ToolPartsDeps {
  env: Env;
  db: AgentDb;
  events: EventLog;
  history: History;
  profile: AgentProfile;
  reports: Reports;
  governor: RunGovernor;
  actions: ActionStore;
  inbox: WakeInbox;
  trace: MeteredRunTrace;
  spawner: Spawner;
  faults: FaultSeam;
  scheduler: AgentScheduler;
  tenant: () => ReturnType<typeof tenantStub>;
  agentId: () => string;
  tenantId: () => string;
  threadOfRun: (runKey: string) => string;
  httpTools: () => ReturnType<typeof tenantHttpTools>;
  /** back-edge: a recorded saga result resumes the drain (built after these parts). */
  resume: () => void;
}

export interface ToolParts {
  approvalGate: ApprovalGate;
  tools: ToolRunner;
  sagas: Sagas;
}

/**
 * An agent's tool side (split from wiring.ts, which had grown past 400 lines): the approval gate, the tool runner with
 * the agent-side tools, and the sagas that run a tool's side effects on Workflows. The runner and the sagas call each
 * other (a saga-run tool starts a saga; a saga executes the tool), so both are built here together.
 */
export function wireToolParts(deps: ToolPartsDeps): ToolParts {
  const { env, db, events, history, profile, reports, governor, actions, inbox, trace, spawner, faults, scheduler, tenant } = deps;
  const approvalGate = new ApprovalGate({ events, trace, request: (request) => tenant().requestToolApproval(request) });
  let sagas: Sagas | undefined;
  const tools = new ToolRunner({
    actions,
    history,
    events,
    agentTools: {
      profile,
      events,
      reports,
      recall: (query, options) => searchMessages(db, query, options),
      extensionSlots: () => governor.extensionSlots(profile.get()!),
      threadOfRun: deps.threadOfRun,
      openQuestion: (request) => tenant().openQuestion({ ...request, agentId: profile.get()!.id, threadId: inbox.getRun(request.runKey)?.threadId }),
    },
    executeTenantTool: (invocation) => tenant().executeTool(invocation),
    // back-edge: a saga-run tool starts the saga built next.
    startSaga: (invocation, approval) => sagas!.start(invocation, approval),
    approvalFor: (context, action, tool, confidence) => approvalGate.check(context, action, tool, confidence),
    threadOfRun: deps.threadOfRun,
    tenantTools: deps.httpTools,
    spawn: (context, action) => spawner.execute(context.agent, action, context.reason),
    gateTool: (context, action, mutating) => governor.gateTool(context.agent, action, mutating),
  });
  sagas = new Sagas({
    env,
    db,
    events,
    trace,
    actions,
    tools,
    inbox,
    tenantId: deps.tenantId,
    agentId: deps.agentId,
    takeFaults: () => faults.take("saga."),
    dropInstance: () => faults.consume("agent.sagaInstanceLost"),
    executeTool: (invocation) => tenant().executeTool(invocation),
    approvalState: async (decisionId) => JSON.parse(await tenant().toolApprovalState(decisionId)) as ApprovalState,
    watch: () => armSagaWatch(scheduler),
    unwatch: () => disarmSagaWatch(scheduler),
    resume: deps.resume,
  });
  return { approvalGate, tools, sagas };
}
