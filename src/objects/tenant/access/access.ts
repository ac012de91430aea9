import type { Scope } from "../../../config";
import { failure, type Result } from "../../../core/runtime/result";
import type { ApiKeyInfo, Tenant } from "../../../schema/admin/auth";
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

  /**
   * `keyedId` (under an Idempotency-Key): a key already holding it was created by a first attempt whose answer was
   * lost (its claim lapsed before the sealed answer was stored). Its secret exists only as a hash, so it cannot be
   * shown again: the answer is 409 naming the key (revoke it, retry with a new Idempotency-Key), never a second key.
   */
  createKey(actor: string, name: string | null, scopes: Scope[], keyedId?: string): Result<{ id: string; key: string; scopes: Scope[] }> {
    if (keyedId !== undefined && this.deps.keys.exists(keyedId)) return lostSecret(`API key ${keyedId}`, `DELETE /v1/keys/${keyedId}`);
    const created = this.deps.keys.create(readTenant(this.deps.db)!.id, name, scopes, keyedId);
    this.deps.audit(actor, "key.created", created.id, { scopes });
    return { ok: true, ...created };
  }

  revokeKey(actor: string, id: string): Result<{ key: ApiKeyInfo }> {
    const key = this.deps.keys.revoke(id);
    if (!key) return failure("not_found", "key not found");
    this.deps.audit(actor, "key.revoked", id, {});
    return { ok: true, key };
  }
}

/** A keyed create found what its first attempt made, but that answer held a secret that is gone (only its hash is kept). */
export function lostSecret(what: string, undo: string): Result<never> {
  return failure(
    "idempotency_conflict",
    `a first request with this Idempotency-Key created ${what}, but its answer was lost and its secret cannot be shown again; ${undo}, then retry with a new Idempotency-Key`,
  );
}
