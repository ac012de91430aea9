import type { Brake } from "../core/brakes";
import type { BudgetLimits } from "../core/budget";
import type { ControlMode } from "../core/escalation";
import type { DeliveryStatus } from "./outbound-webhooks";
import type { WakeJob } from "./wake";

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
