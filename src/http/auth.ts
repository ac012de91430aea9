import type { MiddlewareHandler } from "hono";
import type { Scope } from "../config";
import type { Env } from "../env";
export { agentStub, tenantStub } from "../objects/shared/stubs";
import { agentStub, tenantStub } from "../objects/shared/stubs";
import { hashApiKey, tenantIdOfApiKey } from "../objects/tenant/access/keys";
import { config } from "../config";
import { inWidgetSession, widgetSessionBase } from "../core/widget-session";
import { ApiError } from "./api-error";
import type { AppEnv, Principal } from "./context";
import { verifyWidgetToken } from "./jwt";


function bearer(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return match ? match[1]! : null;
}

/** Resolves the caller from an API key or a widget JWT, and charges its per-client rate limit. */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async function authenticateRequest(c, next) {
    const token = bearer(c.req.header("authorization")) ?? (c.req.method === "GET" ? c.req.query("access_token") ?? null : null);
    if (!token) throw new ApiError("unauthorized", "send Authorization: Bearer <API key or widget token>");
    const principal = token.startsWith("vk_") ? await fromApiKey(c.env, token) : await fromJwt(c.env, token);
    c.set("principal", principal);
    await next();
  };
}

async function fromApiKey(env: Env, key: string): Promise<Principal> {
  const tenantId = tenantIdOfApiKey(key);
  if (!tenantId) throw new ApiError("unauthorized", "the API key is not valid or was revoked");
  const outcome = await tenantStub(env, tenantId).authenticate(hashApiKey(key));
  if (!outcome.ok) throw authFailure(outcome);
  return { kind: "apiKey", tenantId, keyId: outcome.keyId, scopes: outcome.scopes };
}

async function fromJwt(env: Env, token: string): Promise<Principal> {
  const claims = await verifyWidgetToken(env.VIGIL_MASTER_KEY, token);
  if (!claims) throw new ApiError("unauthorized", "the token is invalid, expired, or not for this service");
  const outcome = await tenantStub(env, claims.tid).chargeClient(`jwt:${claims.sub}`);
  if (!outcome.ok) throw authFailure(outcome);
  return { kind: "jwt", tenantId: claims.tid, subject: claims.sub, scopes: claims.scope, agents: claims.agents };
}

function authFailure(outcome: { code: "unauthorized" | "rate_limited"; message: string; retryAfterSeconds?: number }): ApiError {
  return outcome.code === "rate_limited"
    ? new ApiError("rate_limited", outcome.message, { retryAfterSeconds: outcome.retryAfterSeconds ?? 1 })
    : new ApiError("unauthorized", outcome.message);
}

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

/** Constant-time comparison for the operator token. */
export function isOperator(env: Env, header: string | undefined): boolean {
  const token = bearer(header);
  const expected = env.VIGIL_ADMIN_TOKEN;
  if (!token || !expected || token.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < token.length; i++) diff |= token.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/**
 * The sessionId a message or history request uses. API keys name any session (default: "default").
 * A widget token is confined to its own namespace (src/core/widget-session.ts): omitted or "default"
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
