import type { Result } from "../../../http/error-codes";
import type { Page } from "../../../schema/common";
import type { BrakeView, EngageBrakeBody } from "../../../schema/brakes";
import type { InferenceGrant, Policy, PolicyBody } from "../../../schema/policy";
import type { CreateConsentBody, CreateProviderSecretBody, ProviderConsent, ProviderSecret } from "../../../schema/providers";
import type { DelegationContext, SpawnDecisionRecord } from "../../agent/delegation/spawn";
import { cursorPage, numberKeyCursor } from "../../shared/paging";
import { listAudit, type AuditEntry } from "../governance/audit-log";
import { findAudit } from "../governance/audit-log";
import type { Governance } from "../governance/governance";
import type { InferenceGrantRequest } from "../governance/inference-grant";
import { delegationContextFor, recordSpawnDecision } from "../directory/lineage";
import { runGovernanceFor, type RunGovernance } from "../governance/run-policy";
import { TenantAlertnessRpc } from "./alertness";

/** Governance (SPEC §3, §5–§6): policy, provider secrets and consents, the inference grant, brakes, delegation admission, the audit log. */
export class TenantGovernanceRpc extends TenantAlertnessRpc {
  /** The current governance policy (version 0 = the empty default). */
  getPolicy(): Policy {
    return this.parts.governance.policy();
  }

  /** `PUT /v1/policy`: validated, appended as the next version and audited (an identical body changes nothing). */
  putPolicy(actor: string, body: PolicyBody, ifMatch?: number): ReturnType<Governance["putPolicy"]> {
    return this.parts.governance.putPolicy(actor, body, ifMatch);
  }

  createProviderSecret(actor: string, body: CreateProviderSecretBody, requestKey?: string): ReturnType<Governance["createSecret"]> {
    return this.parts.governance.createSecret(actor, body, requestKey);
  }

  listProviderSecrets(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderSecret>> {
    return this.parts.governance.listSecrets(query);
  }

  revokeProviderSecret(actor: string, id: string): Result<{ secret: ProviderSecret }> {
    return this.parts.governance.revokeSecret(actor, id);
  }

  recordProviderConsent(actor: string, body: CreateConsentBody): ReturnType<Governance["recordConsent"]> {
    return this.parts.governance.recordConsent(actor, body);
  }

  listProviderConsents(query: { limit: number; cursor?: string | undefined }): Result<Page<ProviderConsent>> {
    return this.parts.governance.listConsents(query);
  }

  /** The inference gate's tenant half (provider → model → privacy receipt → secret); every denial is audited. */
  inferenceGrant(request: InferenceGrantRequest): Promise<Result<{ grant: InferenceGrant }>> {
    return this.parts.governance.inferenceGrant(request);
  }

  /** Hosts the tenant's agents may reach: configured provider endpoints and registered HTTP tools. */
  async egressHosts(): Promise<string[]> {
    return this.parts.governance.egressHosts();
  }

  /** `POST /v1/brakes`: engaged at once (audited; covered pending decisions are suspended). */
  engageBrake(actor: string, body: EngageBrakeBody): Result<{ brake: BrakeView }> {
    return this.parts.brakes.engage(actor, body);
  }

  listBrakes(query: { limit: number; cursor?: string | undefined; status?: "active" | "released" | undefined }): Result<Page<BrakeView>> {
    return cursorPage(query.cursor, numberKeyCursor, (before) => this.parts.brakes.list({ limit: query.limit, status: query.status, before }));
  }

  releaseBrake(actor: string, id: string): Result<{ brake: BrakeView }> {
    return this.parts.brakes.release(actor, id);
  }

  /** What governs one agent's run right now, in one round trip: active brakes, the tenant's time zone, budgets, tool quotas and rate limits. */
  governanceFor(agent: { agentId: string; kind: string }): RunGovernance {
    return runGovernanceFor({ brakes: this.parts.brakes, governance: this.parts.governance, timeZone: this.getTenant()?.timeZone ?? "UTC" }, agent);
  }

  /** What spawn admission needs from the tenant, in one round trip: live children, brakes, time zone, budgets. */
  delegationContext(parent: { agentId: string; kind: string }): DelegationContext {
    return delegationContextFor(this.parts.db, parent.agentId, this.governanceFor(parent));
  }

  /** Every spawn decision is a policy decision: audited (`agent.spawned` / `agent.spawn_denied`) and counted. */
  recordSpawnDecision(decision: SpawnDecisionRecord): void {
    recordSpawnDecision({ audit: (...entry) => this.audit(...entry), metrics: this.parts.metrics }, decision);
  }

  listAudit(limit: number, beforeSeq?: number): AuditEntry[] {
    return listAudit(this.parts.db, limit, beforeSeq);
  }

  /** Operator audit object only: the newest audit entry about `target` with `action`. */
  findAudit(action: string, target: string): AuditEntry | null {
    return findAudit(this.parts.db, action, target);
  }
}
