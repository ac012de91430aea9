import type { Scope } from "../../../config";
import type { ApiKeys } from "./keys";
import type { TenantDb } from "../types";

export type AuthOutcome = { ok: true; keyId: string; scopes: Scope[] } | { ok: false; code: "unauthorized"; message: string };

/** Who is calling: an API key by its hash. The Worker caches the answer; the request budget lives in its Rate Limiting binding. */
export class ClientAuth {
  /** Lookups served since the object started (a test seam shows a cached key costs none). */
  lookups = 0;

  constructor(
    private readonly keys: ApiKeys,
    private readonly tenantExists: () => boolean,
  ) {}

  /** Resolves an API key hash (active keys of an existing tenant only). */
  authenticate(keyHash: string): AuthOutcome {
    this.lookups += 1;
    const key = this.tenantExists() ? this.keys.findActive(keyHash) : null;
    if (!key) return { ok: false, code: "unauthorized", message: "the API key is not valid or was revoked" };
    return { ok: true, keyId: key.id, scopes: key.scopes };
  }
}
