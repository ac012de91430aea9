import { config } from "../config";
import { sha256Hex } from "../core/ids/sha256";
import type { Env } from "../env";
import { TENANT_REGISTRY_OBJECT } from "../objects/tenant/access";
import { tenantStub } from "../objects/shared/stubs";
import { ApiError } from "./api-error";
import { CredentialCache, credentialTtlMs } from "./credential-cache";

/**
 * The Worker's gate before any tenant object: whether the tenant exists comes from the platform registry (one call on
 * a cache miss, to one object), never from the tenant's own object, so a credential naming an unknown tenant creates
 * and activates nothing. Credentials that failed are remembered for a short while and each failure is charged to the
 * caller's address, so repeating a forged credential costs neither a Durable Object call nor more than the budget.
 */
const registryAnswers = new CredentialCache<boolean>();
const refusedCredentials = new CredentialCache<true>();

/** Whether the registry holds `tenantId` (cached: a yes for the credential TTL, a no for the short negative TTL). */
export async function tenantExists(env: Env, tenantId: string): Promise<boolean> {
  const cached = registryAnswers.get(tenantId);
  if (cached !== undefined) return cached;
  const known = await tenantStub(env, TENANT_REGISTRY_OBJECT).registryHas(tenantId);
  registryAnswers.set(tenantId, known, known ? credentialTtlMs(env) : config.auth.negativeTtlMs);
  return known;
}

/** This isolate stops admitting an erased tenant at once (others within the credential TTL). */
export function forgetTenant(tenantId: string): void {
  registryAnswers.set(tenantId, false, config.auth.negativeTtlMs);
}

/** A tenant just created through this isolate is known here at once (a refusal cached before does not linger). */
export function rememberTenant(env: Env, tenantId: string): void {
  registryAnswers.set(tenantId, true, credentialTtlMs(env));
}

/** The key a presented credential is remembered under: its SHA-256, never the secret itself. */
export const credentialFingerprint = (credential: string): string => sha256Hex(`refused|${credential}`);

/** Whether this credential failed within the negative TTL (it is refused again without any Durable Object call). */
export function recentlyRefused(fingerprint: string): boolean {
  return refusedCredentials.get(fingerprint) !== undefined;
}

/**
 * Refuses a credential: remembers it (when `fingerprint` is given), charges the failure to the caller's address in the
 * Rate Limiting binding, and throws `error` — or 429 once the address has spent its budget of failures. Requests
 * without `CF-Connecting-IP` (possible only off Cloudflare's edge: local and test runs) are not charged.
 */
export async function refuse(env: Env, headers: Headers, error: ApiError, fingerprint?: string): Promise<never> {
  if (fingerprint !== undefined) refusedCredentials.set(fingerprint, true, config.auth.negativeTtlMs);
  const address = headers.get("cf-connecting-ip");
  if (address && env.CLIENT_RATE_LIMITER) {
    const { success } = await env.CLIENT_RATE_LIMITER.limit({ key: `refused:${address}` });
    if (!success) throw new ApiError("rate_limited", "too many refused credentials from this address; retry within a minute", { retryAfterSeconds: 60 });
  }
  throw error;
}

/** How many entries the gate holds (each map is capped at config.auth.cacheMaxEntries). */
export function gateSizes(): { registryAnswers: number; refusedCredentials: number } {
  return { registryAnswers: registryAnswers.size, refusedCredentials: refusedCredentials.size };
}
