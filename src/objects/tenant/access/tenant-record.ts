import { config, type Scope } from "../../../config";
import * as schema from "../../../db/tenant-schema";
import { failure, type Result } from "../../../core/runtime/result";
import type { Tenant } from "../../../schema/admin/auth";
import { nowIso } from "../../shared/sqlite";
import { ApiKeys } from "./keys";
import type { TenantDb } from "../types";

/** The tenant this object holds, or null before `initTenant` (and after an erasure). */
export function readTenant(db: TenantDb): Tenant | null {
  return db.select().from(schema.tenant).get() ?? null;
}

/** The tenant row and its first API key, in one transaction: a tenant never exists without a way in. */
export function createTenant(db: TenantDb, id: string, name: string, timeZone: string): Result<{ tenant: Tenant; key: { id: string; key: string; scopes: Scope[] } }> {
  if (readTenant(db)) return failure("conflict", "tenant already exists");
  const tenant: Tenant = { id, name, timeZone, createdAt: nowIso() };
  const key = db.transaction((tx) => {
    tx.insert(schema.tenant).values(tenant).run();
    return new ApiKeys(tx as unknown as TenantDb).create(id, "initial", [...config.defaultScopes]);
  });
  return { ok: true, tenant, key };
}
