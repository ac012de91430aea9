import type { RateLimits, Scope } from "../../../config";
import { rateLimitKeys } from "../../../core/rate-limit";
import { consumeCounter } from "../../shared/counters";
import type { ApiKeys } from "./keys";
import type { TenantDb } from "../types";

export type AuthOutcome =
  | { ok: true; keyId: string; scopes: Scope[] }
  | { ok: false; code: "unauthorized"; message: string }
  | { ok: false; code: "rate_limited"; message: string; retryAfterSeconds: number };

/** Who is calling (an API key, or a JWT principal already verified at the edge) and whether their request budget allows it. */
export class ClientAuth {
  constructor(
    private readonly db: TenantDb,
    private readonly keys: ApiKeys,
    private readonly limits: RateLimits,
    private readonly tenantExists: () => boolean,
  ) {}

  /** Resolves an API key hash and charges the key's request budget in one step. */
  authenticate(keyHash: string): AuthOutcome {
    const key = this.tenantExists() ? this.keys.findActive(keyHash) : null;
    if (!key) return { ok: false, code: "unauthorized", message: "the API key is not valid or was revoked" };
    return this.overBudget(key.id, `at most ${this.limits.requestsPerMinutePerKey} requests per minute per key`) ?? { ok: true, keyId: key.id, scopes: key.scopes };
  }

  /** Rate limit for JWT principals (per subject), same budget as a key. */
  chargeClient(clientId: string): AuthOutcome {
    if (!this.tenantExists()) return { ok: false, code: "unauthorized", message: "unknown tenant" };
    return this.overBudget(clientId, "too many requests") ?? { ok: true, keyId: clientId, scopes: [] };
  }

  /** Charges one request to the client's per-minute budget; the refusal when it is spent, else null. */
  private overBudget(clientId: string, message: string): AuthOutcome | null {
    const limit = consumeCounter(this.db, rateLimitKeys.client(clientId), this.limits.requestsPerMinutePerKey, 60_000);
    return limit.allowed ? null : { ok: false, code: "rate_limited", message, retryAfterSeconds: limit.retryAfterSeconds };
  }
}
