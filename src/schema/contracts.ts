import type { TrustLevel } from "../core/wakes/provenance";
import type { Brake } from "../core/governance/brakes";
import type { BudgetLimits } from "../core/governance/budget";
import type { ControlMode } from "../core/governance/escalation";
import type { ExtensionSlotRegistry } from "../core/memory/extension-slots";
import type { RunPolicy } from "../core/governance/run-governance";
import type { Agent } from "./agents/agents";
import type { DeliveryStatus } from "./admin/outbound-webhooks";
import type { ToolListing } from "./admin/tools";
import type { WakeJob } from "./agents/wake";

/**
 * Contracts between the Durable Objects and the workflow: what one object sends another over RPC
 * (or through a ToolSagaWorkflow step). They live here, not in either object, so neither side
 * imports the other's internals.
 */

/** AgentDO → TenantDO: before a mutating call's saga starts, does it need a person? */
export interface ApprovalRequest {
  agentId: string;
  controlMode: ControlMode;
  operationId: string;
  runKey: string;
  threadId: string;
  toolName: string;
  riskLevel: string;
  sideEffectKind: string;
  args: Record<string, unknown>;
  /** The model's confidence, if it offered one. */
  confidence?: number | undefined;
  /** The trust level of the input the run answers (core/wakes/provenance.ts); `untrusted_external` always asks a person. */
  inputTrust?: TrustLevel | undefined;
}

export type ApprovalAnswer = { required: false; reason: string } | { required: true; decisionId: string };

/** Where the saga stands with its decision (crosses to the workflow as JSON). */
export type ApprovalState =
  | { state: "pending"; waitMs: number }
  | { state: "approved"; decisionId: string; resolutionType: "approve" | "modify"; modifiedArgs: Record<string, unknown> | null; resolvedBy: string }
  | { state: "rejected"; decisionId: string; code: "rejected" | "cancelled" | "not_found"; message: string; resolvedBy: string };

/** AgentDO → TenantDO: one event of the agent's log, forwarded to the tenant stream. */
export interface ForwardedAgentEvent {
  seq: number;
  type: string;
  runKey: string | null;
  data: Record<string, unknown>;
  createdAt: string;
}

/** Child AgentDO → parent AgentDO: how the delegated run ended. */
export interface ChildReport {
  childId: string;
  childRunKey: string;
  status: string;
  errorCode: string | null;
  reply: string | null;
}

/** Parent AgentDO → child AgentDO: the delegated wake the child starts with. */
export type ChildWake = Pick<WakeJob, "runKey" | "reason" | "threadId" | "authority" | "input">;

/** TenantDO → AgentDO: what spawn admission needs from the tenant, in one round trip. */
export interface DelegationContext {
  /** Children of the parent that can still run (directory: created or active). */
  liveChildIds: string[];
  brakes: Brake[];
  timeZone: string;
  policy: { budgets: BudgetLimits };
}

/** AgentDO → TenantDO: sent to the spawn decision audit and the `vigil_spawns_total` counter. */
export interface SpawnDecisionRecord {
  parentId: string;
  operationId: string;
  outcome: "admitted" | "denied";
  reason: string | null;
  childId: string | null;
}

/** TenantDO → outbound consumer: what to send for a delivery (or skip it). */
export type PreparedAttempt =
  | { action: "send"; deliveryId: string; endpointId: string; url: string; secret: string; body: string; eventType: string; attempt: number; timeoutMs: number }
  | { action: "skip"; status: DeliveryStatus | "unknown" };

/** Outbound consumer → TenantDO: how an attempt went. `error` is a short code (`http_500`, `timeout`, `network_error`, …), never a body. */
export interface AttemptReport {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** TenantDO → AgentDO: what governs one agent's run right now (brakes, budget day, policy limits), in one round trip. */
export interface RunGovernance {
  brakes: Brake[];
  timeZone: string;
  policy: RunPolicy;
  /** Registered extension slot keys (the slots API and `memory_update_slot` validate against them). */
  extensionSlots: ExtensionSlotRegistry;
  /** The tenant's override of the interactive session inactivity TTL, if any. */
  sessionIdleTtlSeconds: number | null;
}

/**
 * TenantDO → AgentDO (`applyTenantSnapshot`, or the agent's first read): what an agent keeps of its
 * tenant (issue 12 §2), everything its run loop consults at admission, at step boundaries and before
 * tool calls, plus the tenant's HTTP tools. The version rises with every change; an agent stores the
 * newest version it has seen in its own SQLite.
 */
export interface AgentSnapshot {
  version: number;
  governance: RunGovernance;
  /** The tenant's registered HTTP tools (`GET /v1/tools` entries of kind `http`). */
  httpTools: ToolListing[];
  /** The tenant exports traces (issue 15 §3); only then does the agent ask for the target, whose headers are secret. */
  telemetry: boolean;
}

/** Which Durable Object class a counted call went to. */
export type CalledObject = "tenant" | "agent";

/** Durable Object calls counted in one isolate (`vigil_do_calls_total`), piggybacked on a run report or a metrics read. */
export interface DoCallCount {
  object: CalledObject;
  method: string;
  count: number;
}

/** AgentDO → TenantDO: what a completed run tells its tenant. */
export interface AgentRunActivity {
  stateRevision: number;
  messageIds: string[];
  cascadeDepth?: number;
  /** The agent's report-part number: the tenant records each part once, however often a crash makes it re-sent. */
  seq?: number;
}

/** AgentDO → TenantDO: how a wake's run ended, for the tenant's metrics. */
export interface RunOutcome {
  status: string;
  reason: string;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Provider cost of the run in micro-USD (RunTrace usage rows); 0 for the builtin models. */
  costMicros?: number;
  /** The agent's report-part number (see AgentRunActivity.seq). */
  seq?: number;
}

/** AgentDO → TenantDO (`reportRun`): one agent run's report; lists may be empty (events only, between runs). */
export interface RunReport {
  events: ForwardedAgentEvent[];
  /** The reporting agent as activity notifications name it (null when the report carries no activity). */
  agent: Pick<Agent, "id" | "kind" | "lifecycle"> | null;
  activities: AgentRunActivity[];
  outcomes: RunOutcome[];
  calls: DoCallCount[];
}
