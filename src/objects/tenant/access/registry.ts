import type { Tenant } from "../../../schema/admin/auth";

/**
 * The TENANT-namespace object that holds the platform's tenant registry (never a tenant: tenant ids are `t` + 16
 * characters). The Worker asks it whether a tenant exists before it calls a tenant's own object, so a credential naming
 * an unknown tenant activates and creates nothing but this one object.
 */
export const TENANT_REGISTRY_OBJECT = "platform:registry";

const PREFIX = "vigil:registry:tenant:";

/** One registered tenant: what `GET /v1/tenants` lists and what platform passes walk. */
export type RegisteredTenant = Pick<Tenant, "id" | "name" | "createdAt">;

/**
 * Every tenant of the platform, one entry per tenant in the registry object's synchronous key-value storage (ordered by
 * id, so a page is one range read). Written by the operator's create and erase, and by a tenant that finds itself
 * missing when it starts (tenants created before the registry existed).
 */
export class TenantRegistry {
  constructor(private readonly kv: SyncKvStorage) {}

  record(tenant: RegisteredTenant): void {
    this.kv.put(PREFIX + tenant.id, { name: tenant.name, createdAt: tenant.createdAt });
  }

  remove(tenantId: string): boolean {
    return this.kv.delete(PREFIX + tenantId);
  }

  has(tenantId: string): boolean {
    return this.kv.get(PREFIX + tenantId) !== undefined;
  }

  /** Up to `limit` tenants by id, after the tenant id `after`; `next` is the cursor of the following page. */
  list(limit: number, after?: string): { data: RegisteredTenant[]; next: string | null } {
    const data: RegisteredTenant[] = [];
    const options = { prefix: PREFIX, limit: limit + 1, ...(after !== undefined && { startAfter: PREFIX + after }) };
    for (const [key, value] of this.kv.list<{ name: string; createdAt: string }>(options)) {
      data.push({ id: key.slice(PREFIX.length), name: value.name, createdAt: value.createdAt });
    }
    const more = data.length > limit;
    if (more) data.pop();
    return { data, next: more ? data.at(-1)!.id : null };
  }
}

/** The note a tenant object keeps once the registry holds it (set by a create through the registry, or by `joinRegistryOnce`). */
export const REGISTERED_NOTE = "vigil:registered";

/**
 * A tenant object that starts without the note (a tenant created before the registry existed) records itself in the
 * registry, in the background, and notes it; a failure leaves the note unset, so the next start tries again.
 */
export function joinRegistryOnce(ctx: DurableObjectState, tenant: () => Tenant | null, record: (entry: RegisteredTenant) => Promise<void>): void {
  void ctx.blockConcurrencyWhile(async () => {
    if (ctx.storage.kv.get(REGISTERED_NOTE) !== undefined) return;
    const found = tenant();
    if (!found) return;
    const joined = record({ id: found.id, name: found.name, createdAt: found.createdAt }).then(() => ctx.storage.kv.put(REGISTERED_NOTE, true));
    ctx.waitUntil(joined.catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "joining the tenant registry failed", error: String(error) }))));
  });
}
