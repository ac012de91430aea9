import type { Env } from "../../../env";
import { failure, type Result } from "../../../core/runtime/result";
import type { Tenant } from "../../../schema/admin/auth";
import type { Migrations } from "../../shared/sqlite";
import { agentStub, tenantStub } from "../../shared/stubs";
import type { Audit, TenantDb } from "../types";
import { eraseTenant, forgetAgent, OPERATOR_AUDIT_OBJECT, type TenantErasure } from "./erasure";

export interface TenantErasuresDeps {
  db: TenantDb;
  storage: DurableObjectStorage;
  migrations: Migrations;
  env: Env;
  tenant(): Tenant | null;
  audit: Audit;
  /** Every row is gone (or going): what the parts keep in memory of their rows is dropped (the live webhook endpoints, the snapshot version). */
  forgetRows(): void;
}

/** SPEC §7: forgetting one erased agent, and erasing the whole tenant (the record survives in the operator audit object). */
export class TenantErasures {
  constructor(private readonly deps: TenantErasuresDeps) {}

  /** An agent was erased: the tenant forgets its directory entry and agent-keyed rows, and audits it. */
  agentErased(receipt: { agentId: string; reason: string; rows: Record<string, number> }): void {
    const tenantRows = forgetAgent(this.deps.db, this.deps.storage, receipt.agentId);
    this.deps.audit("system", "agent.erased", receipt.agentId, { reason: receipt.reason, agentRows: receipt.rows, tenantRows });
  }

  /** Erases every agent and then every row of this tenant. */
  async eraseTenant(actor: string): Promise<Result<{ erasure: TenantErasure }>> {
    const tenant = this.deps.tenant();
    if (!tenant) return failure("not_found", "tenant not found");
    const { db, storage, migrations, env } = this.deps;
    try {
      const erasure = await eraseTenant(
        {
          db,
          storage,
          tenantId: tenant.id,
          migrations,
          eraseAgent: (agentId) => agentStub(env, tenant.id, agentId).eraseForTenant(),
          recordErasure: ({ actor: by, ...detail }) => tenantStub(env, OPERATOR_AUDIT_OBJECT).audit(by, "tenant.erased", tenant.id, detail),
        },
        actor,
      );
      return { ok: true, erasure };
    } finally {
      // Also after a failure part-way: rows may be gone, so nothing kept of them is trusted.
      this.deps.forgetRows();
    }
  }
}
