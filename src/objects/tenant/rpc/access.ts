import type { Scope } from "../../../config";
import { failure, type Result } from "../../../http/error-codes";
import type { Agent } from "../../../schema/agents";
import type { ApiKeyInfo, Tenant } from "../../../schema/auth";
import type { Page } from "../../../schema/common";
import { cursorPage, textKeyCursor } from "../../shared/paging";
import type { AuthOutcome } from "../access/client-auth";
import type { IdempotencyBegin } from "../access/idempotency";
import { createTenant } from "../access/tenant-record";
import { TenantCore } from "./core";
import type { AgentRunActivity } from "../directory/agent-activity";

/** Who may call (the tenant record, API keys, request budgets), the agent directory and idempotency records. */
export class TenantAccessRpc extends TenantCore {
  initTenant(id: string, name: string, timeZone: string): Result<{ tenant: Tenant; apiKey: string }> {
    const created = createTenant(this.parts.db, id, name, timeZone);
    if (!created.ok) return created;
    this.audit("operator", "tenant.created", id, { name });
    this.audit("operator", "key.created", created.key.id, { scopes: created.key.scopes });
    return { ok: true, tenant: created.tenant, apiKey: created.key.key };
  }

  /** Resolves an API key hash and charges the key's request budget in one step. */
  authenticate(keyHash: string): AuthOutcome {
    return this.parts.clientAuth.authenticate(keyHash);
  }

  /** Rate limit for JWT principals (per subject), same budget as a key. */
  chargeClient(clientId: string): AuthOutcome {
    return this.parts.clientAuth.chargeClient(clientId);
  }

  createKey(actor: string, name: string | null, scopes: Scope[]): { id: string; key: string; scopes: Scope[] } {
    const created = this.parts.keys.create(this.getTenant()!.id, name, scopes);
    this.audit(actor, "key.created", created.id, { scopes });
    return created;
  }

  listKeys(): ApiKeyInfo[] {
    return this.parts.keys.list();
  }

  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    const key = this.parts.keys.revoke(id);
    if (!key) return failure("not_found", "key not found");
    this.audit(actor, "key.revoked", id, {});
    return { ok: true, key };
  }

  /** The AgentDO reports every change of its record: directory snapshot + agentChangedNotification. */
  async upsertAgentDirectory(agent: Agent, parentId: string | null = null): Promise<void> {
    this.parts.agentActivity.recordChange(agent, parentId);
    await this.dispatchPending();
  }

  /** After a run: agentStateChangedNotification + agentMessageAppendedNotification, so agents can follow each other. */
  async recordAgentActivity(agent: Pick<Agent, "id" | "kind" | "lifecycle">, activity: AgentRunActivity): Promise<void> {
    this.parts.agentActivity.recordRun(agent, activity);
    await this.dispatchPending();
  }

  listAgents(query: { limit: number; cursor?: string | undefined; includeChildren: boolean }): Result<Page<Agent>> {
    return cursorPage(query.cursor, textKeyCursor, (after) => this.parts.directory.list(query.limit, after, query.includeChildren));
  }

  hasAgent(agentId: string): boolean {
    return this.parts.directory.has(agentId);
  }

  idempotencyBegin(scope: string, key: string, requestHash: string): IdempotencyBegin {
    return this.parts.idempotency.begin(scope, key, requestHash);
  }

  idempotencyComplete(scope: string, key: string, status: number, body: string): void {
    this.parts.idempotency.complete(scope, key, status, body);
  }

  idempotencyAbort(scope: string, key: string): void {
    this.parts.idempotency.abort(scope, key);
  }
}
