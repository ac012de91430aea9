import type { MiddlewareHandler } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import type { Scope } from "../config";
import type { Env } from "../env";
export { agentStub, tenantStub } from "../objects/shared/stubs";
import { agentStub, tenantStub } from "../objects/shared/stubs";
import { hashApiKey, tenantIdOfApiKey } from "../objects/tenant/access";
import { config } from "../config";
import { keyringFromEnv } from "../core/egress/keyring";
import { inWidgetSession, widgetSessionBase } from "../core/runtime/widget-session";
import { ApiError } from "./api-error";
import type { AppEnv, Principal } from "./context";
import { CredentialCache, credentialTtlMs } from "./credential-cache";
import { verifyIdpToken, isIdpToken } from "./idp-tokens";
import { verifyWidgetToken } from "./jwt";
import { queryAccessToken } from "./query-token";
import { credentialFingerprint, forgetTenant, recentlyRefused, refuse, tenantExists } from "./tenant-gate";

import type { StreamEndReason, StreamGuard } from "./stream-guard";


function bearer(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return match ? match[1]! : null;
}

/**
 * Resolves the caller from an API key, a widget token or a tenant IdP token, and charges its per-client rate limit.
 * No tenant object is called for a tenant the registry does not hold, nor for a credential refused moments ago.
 */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async function authenticateRequest(c, next) {
    const token = bearer(c.req.header("authorization")) ?? queryAccessToken(c.req.method, c.req.url);
    if (!token) throw new ApiError("unauthorized", "send Authorization: Bearer <API key or widget token>");
    const headers = c.req.raw.headers;
    const principal = token.startsWith("vk_") ? await fromApiKey(c.env, token, headers) : await fromJwt(c.env, token, headers);
    c.set("principal", principal);
    await next();
  };
}

/** What a verified API key grants; cached per isolate by the key's hash (docs/decisions/streams-credentials-retention.md). */
interface KeyGrant {
  tenantId: string;
  keyId: string;
  scopes: Scope[];
}

const keyGrants = new CredentialCache<KeyGrant>();

/** Event streams open in this isolate, by `tenantId:keyId`: a revocation here ends them at once. */
const streamsByKey = new Map<string, Set<(reason: StreamEndReason) => void>>();

/** The isolate that revokes a key stops honouring it (and ends its open streams) at once; other isolates within the cache TTL. */
export function forgetRevokedKey(tenantId: string, keyId: string): void {
  keyGrants.evict((grant) => grant.tenantId === tenantId && grant.keyId === keyId);
  for (const end of streamsByKey.get(`${tenantId}:${keyId}`) ?? []) end("key_revoked");
}

/** An erased tenant's keys and widget tokens stop at once in the isolate that erased it (elsewhere within the cache TTL). */
export function forgetErasedTenant(tenantId: string): void {
  keyGrants.evict((grant) => grant.tenantId === tenantId);
  forgetTenant(tenantId);
  for (const [streamKey, ends] of streamsByKey) if (streamKey.startsWith(`${tenantId}:`)) for (const end of ends) end("key_revoked");
}

/**
 * How an SSE stream ends with its credential: a widget or IdP token at its `exp`; an API key when it is revoked — at
 * once through this isolate, else within one cache TTL: the key is re-checked every 0.45 TTL, and a cached grant
 * counts only if it was verified within the last 0.45 TTL, so a revocation is seen at most 0.9 TTL (plus timer delay)
 * later, whichever request or stream cached the grant. A refused re-check drops the grant for every stream here.
 */
export function streamGuardFor(env: Env, principal: Principal): StreamGuard {
  const recheckMs = Math.max(250, Math.floor(credentialTtlMs(env) * 0.45));
  if (principal.kind === "jwt") return { expiresAtMs: principal.expiresAtMs, recheckMs };
  const { tenantId, keyId, keyHash } = principal;
  const slot = `${tenantId}:${keyId}`;
  return {
    recheckMs,
    stillValid: async () => {
      if (keyHash === undefined || keyGrants.get(keyHash, Date.now(), recheckMs)) return true;
      const outcome = await tenantStub(env, tenantId).authenticate(keyHash);
      if (outcome.ok) keyGrants.set(keyHash, { tenantId, keyId: outcome.keyId, scopes: outcome.scopes }, credentialTtlMs(env));
      else keyGrants.evict((grant) => grant.tenantId === tenantId && grant.keyId === keyId);
      return outcome.ok;
    },
    register: (end) => {
      const ends = streamsByKey.get(slot) ?? new Set();
      ends.add(end);
      streamsByKey.set(slot, ends);
      return () => {
        ends.delete(end);
        if (ends.size === 0) streamsByKey.delete(slot);
      };
    },
  };
}

const badKey = () => new ApiError("unauthorized", "the API key is not valid or was revoked");

async function fromApiKey(env: Env, key: string, headers: Headers): Promise<Principal> {
  const tenantId = tenantIdOfApiKey(key);
  if (!tenantId) return refuse(env, headers, badKey());
  const hash = hashApiKey(key);
  let grant = keyGrants.get(hash);
  if (!grant) {
    const fingerprint = credentialFingerprint(key);
    if (recentlyRefused(fingerprint) || !(await tenantExists(env, tenantId))) return refuse(env, headers, badKey(), fingerprint);
    const outcome = await tenantStub(env, tenantId).authenticate(hash);
    if (!outcome.ok) return refuse(env, headers, new ApiError("unauthorized", outcome.message), fingerprint);
    grant = { tenantId, keyId: outcome.keyId, scopes: outcome.scopes };
    keyGrants.set(hash, grant, credentialTtlMs(env));
  }
  await chargeClient(env, `key:${grant.keyId}`);
  return { kind: "apiKey", ...grant, keyHash: hash };
}

/**
 * A token is checked without any tenant object (signature, then the registry; an IdP's settings are cached), so a
 * refused one is only charged, not remembered: a token refused while its IdP had not yet published the key (an unknown
 * `kid`) verifies once the key set is fetched again.
 */
async function fromJwt(env: Env, token: string, headers: Headers): Promise<Principal> {
  const refused = () => refuse(env, headers, new ApiError("unauthorized", "the token is invalid, expired, or not for this service"));
  // RS256/ES256: the tenant's own IdP (JWKS, after the registry knows the tenant); else a Vigil-minted HS256 widget token.
  const claims = isIdpToken(token) ? await verifyIdpToken(env, token) : await verifyWidgetToken(keyringFromEnv(env), token);
  if (!claims || !(await tenantExists(env, claims.tid))) return refused();
  await chargeClient(env, `jwt:${claims.tid}:${claims.sub}`);
  return { kind: "jwt", tenantId: claims.tid, subject: claims.sub, scopes: claims.scope, agents: claims.agents, ...(claims.exp ? { expiresAtMs: claims.exp * 1000 } : {}) };
}

/**
 * Per-client request budget through Cloudflare's Rate Limiting binding (wrangler.toml `[[ratelimits]]`), not a
 * counter in the tenant's object. A deployment without the binding has no per-client limit (the agent's turn limit stays).
 */
async function chargeClient(env: Env, clientId: string): Promise<void> {
  if (!env.CLIENT_RATE_LIMITER) return;
  const { success } = await env.CLIENT_RATE_LIMITER.limit({ key: clientId });
  if (!success) throw new ApiError("rate_limited", "too many requests from this client; retry within a minute", { retryAfterSeconds: RATE_LIMIT_PERIOD_SECONDS });
}

/** The period of the `[[ratelimits]]` binding in wrangler.toml (the binding does not say when its window ends). */
const RATE_LIMIT_PERIOD_SECONDS = 60;

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) throw new ApiError("forbidden", `this credential lacks the ${scope} scope`);
}

/** Widget tokens see only the agents they were minted for; anything else looks absent. */
export function requireAgentAccess(principal: Principal, agentId: string): void {
  if (principal.kind === "jwt" && !principal.agents.includes(agentId)) throw new ApiError("not_found", "agent not found");
}

/** Only API keys manage the tenant (keys, tokens); widget tokens never do. */
export function requireApiKey(principal: Principal): asserts principal is Extract<Principal, { kind: "apiKey" }> {
  if (principal.kind !== "apiKey") throw new ApiError("forbidden", "this operation needs an API key");
}

/** The tenant administrator: an API key with the `admin` scope (every secret- or policy-changing route). */
export function requireAdminKey(principal: Principal): Extract<Principal, { kind: "apiKey" }> {
  requireApiKey(principal);
  requireScope(principal, "admin");
  return principal;
}

/**
 * Whether the request carries the operator token. Hono's `timingSafeEqual` compares SHA-256 digests of both sides
 * before the strings, so neither the content nor the length of the expected token leaks through timing.
 */
export async function isOperator(env: Env, header: string | undefined): Promise<boolean> {
  return isOperatorToken(env, bearer(header));
}

/** Whether `token` is the operator token (VIGIL_ADMIN_TOKEN), compared in constant time. */
export async function isOperatorToken(env: Env, token: string | null | undefined): Promise<boolean> {
  const expected = env.VIGIL_ADMIN_TOKEN;
  if (!expected) return false;
  return timingSafeEqual(token ?? "", expected);
}

/** Admits only the operator token (tenant lifecycle, debug and bench routes); anything else is 401. */
export function requireOperator(): MiddlewareHandler<AppEnv> {
  return async function requireOperatorToken(c, next) {
    if (!(await isOperator(c.env, c.req.header("authorization")))) throw new ApiError("unauthorized", "this endpoint needs the operator token");
    await next();
  };
}

/**
 * The sessionId a message or history request uses. API keys name any session (default: "default").
 * A widget token is confined to its own namespace (src/core/runtime/widget-session.ts): omitted or "default"
 * is the visitor's base session; any session outside the namespace looks absent (404).
 */
export function sessionFor(principal: Principal, requested: string | undefined): string {
  if (principal.kind !== "jwt") return requested ?? config.defaultSessionId;
  const base = widgetSessionBase(principal.subject);
  if (requested === undefined || requested === config.defaultSessionId) return base;
  if (!inWidgetSession(base, requested)) throw new ApiError("not_found", "session not found");
  return requested;
}

/** A widget token's session namespace (what it may see of the agent's runs, events and decisions); undefined for API keys. */
export function widgetNamespace(principal: Principal): string | undefined {
  return principal.kind === "jwt" ? widgetSessionBase(principal.subject) : undefined;
}

/** The checks every per-agent route starts with (scope, then widget-token agent access), and the agent's stub. */
export function agentFor(principal: Principal, env: Env, agentId: string, scope: Scope) {
  requireScope(principal, scope);
  requireAgentAccess(principal, agentId);
  return agentStub(env, principal.tenantId, agentId);
}
