import { desc, eq } from "drizzle-orm";
import { config, type Scope } from "../../../config";
import { sha256Hex } from "../../../core/ids/sha256";
import * as schema from "../../../db/tenant-schema";
import { randomId, randomSecret } from "../../../ids";
import type { ApiKeyInfo } from "../../../schema/admin/auth";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

/** `vk_<tenantId>_<secret>`: the tenant id routes the lookup to one TenantDO; only the hash is stored. */
export function formatApiKey(tenantId: string, secret: string): string {
  return `${config.apiKeyPrefix}${tenantId}_${secret}`;
}

export function tenantIdOfApiKey(key: string): string | null {
  const match = /^vk_(t[0-9a-z]{16})_[A-Za-z0-9_-]{32,64}$/.exec(key);
  return match ? match[1]! : null;
}

export const hashApiKey = (key: string): string => sha256Hex(key);

export class ApiKeys {
  constructor(private readonly db: TenantDb) {}

  create(tenantId: string, name: string | null, scopes: Scope[], id: string = randomId("key_")): { id: string; key: string; scopes: Scope[] } {
    const key = formatApiKey(tenantId, randomSecret());
    this.db
      .insert(schema.apiKeys)
      .values({ id, hash: hashApiKey(key), prefix: key.slice(0, 24), name, scopes, createdAt: nowIso() })
      .run();
    return { id, key, scopes };
  }

  /** Whether a key, live or revoked, holds this id. */
  exists(id: string): boolean {
    return !!this.db.select({ id: schema.apiKeys.id }).from(schema.apiKeys).where(eq(schema.apiKeys.id, id)).get();
  }

  /** The live (unrevoked) key with this hash, if any. */
  findActive(hash: string): { id: string; scopes: Scope[] } | null {
    const row = this.db.select().from(schema.apiKeys).where(eq(schema.apiKeys.hash, hash)).get();
    if (!row || row.revokedAt) return null;
    return { id: row.id, scopes: row.scopes as Scope[] };
  }

  list(): ApiKeyInfo[] {
    return this.db
      .select()
      .from(schema.apiKeys)
      .orderBy(desc(schema.apiKeys.createdAt))
      .all()
      .map((row) => ({ id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes as Scope[], createdAt: row.createdAt, revokedAt: row.revokedAt }));
  }

  revoke(id: string): ApiKeyInfo | null {
    const row = this.db.select().from(schema.apiKeys).where(eq(schema.apiKeys.id, id)).get();
    if (!row) return null;
    if (!row.revokedAt) this.db.update(schema.apiKeys).set({ revokedAt: nowIso() }).where(eq(schema.apiKeys.id, id)).run();
    return this.list().find((key) => key.id === id) ?? null;
  }
}
