import type { Scope } from "../../../config";
import { failure, type Result } from "../../../core/result";
import type { ApiKeyInfo, Tenant } from "../../../schema/auth";
import type { Audit, TenantDb } from "../types";
import type { ApiKeys } from "./keys";
import { createTenant, readTenant } from "./tenant-record";

/** The tenant record and its API keys, as the operator and key admins change them (every change audited). */
export class TenantAccess {
  constructor(private readonly deps: { db: TenantDb; keys: ApiKeys; audit: Audit }) {}

  initTenant(id: string, name: string, timeZone: string): Result<{ tenant: Tenant; apiKey: string }> {
    const created = createTenant(this.deps.db, id, name, timeZone);
    if (!created.ok) return created;
    this.deps.audit("operator", "tenant.created", id, { name });
    this.deps.audit("operator", "key.created", created.key.id, { scopes: created.key.scopes });
    return { ok: true, tenant: created.tenant, apiKey: created.key.key };
  }

  createKey(actor: string, name: string | null, scopes: Scope[]): { id: string; key: string; scopes: Scope[] } {
    const created = this.deps.keys.create(readTenant(this.deps.db)!.id, name, scopes);
    this.deps.audit(actor, "key.created", created.id, { scopes });
    return created;
  }

  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    const key = this.deps.keys.revoke(id);
    if (!key) return failure("not_found", "key not found");
    this.deps.audit(actor, "key.revoked", id, {});
    return { ok: true, key };
  }
}
