/**
 * Widget users signed in with the tenant's own identity provider (SPEC §2): an RS256/ES256 JWT that
 * names the tenant in `tid`, verified against the key set at the tenant's registered JWKS URL with its
 * issuer and audience. The key set is fetched through the egress door (purpose `jwks`, only the JWKS
 * host, the deployment's mode), cached by jose for `config.jwks.cacheMaxAgeMs`, and fetched again
 * when a token names an unknown `kid` (at most once per `cooldownMs`). The tenant's IdP settings are
 * kept `settingsTtlMs` in this isolate, so a verification costs no TenantDO call in steady state; a tenant the
 * platform registry does not hold is refused before its settings are read.
 */
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { config, type Scope } from "../config";
import { deploymentMode } from "../core/egress/deployment-mode";
import { testOnly } from "../core/runtime/seams";
import { sendThroughDoor } from "../egress";
import type { Env } from "../env";
import { logEvent } from "../log";
import { tenantStub } from "../objects/shared/stubs";
import type { IdentityProvider } from "../schema/admin/policy";
import { CredentialCache } from "./credential-cache";
import type { WidgetClaims } from "./jwt";
import { tenantExists } from "./tenant-gate";

const IDP_ALGORITHMS = new Set(["RS256", "ES256"]);
const TENANT_ID = /^t[0-9a-z]{16}$/;
/** How long this isolate keeps one jose key set (jose refreshes its keys within it by `cacheMaxAgeMs` and unknown kids). */
const KEY_SET_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Per-isolate, bounded (LRU, config.auth.cacheMaxEntries): a tenant's IdP settings and its remote key sets. */
const settingsCache = new CredentialCache<IdentityProvider | null>();
const keySets = new CredentialCache<ReturnType<typeof createRemoteJWKSet>>();

/** Whether a token is signed the way tenant IdP tokens are (anything else is a Vigil-minted HS256 token or garbage). */
export function isIdpToken(token: string): boolean {
  try {
    return IDP_ALGORITHMS.has(decodeProtectedHeader(token).alg ?? "");
  } catch {
    return false;
  }
}

/** The verified claims with their `exp` (an open stream ends there), or null for any failure (no IdP registered, bad signature, expired, wrong issuer or audience, unreachable key set). */
export async function verifyIdpToken(env: Env, token: string): Promise<WidgetClaims | null> {
  let tid: unknown;
  try {
    tid = decodeJwt(token).tid;
  } catch {
    return null;
  }
  if (typeof tid !== "string" || !TENANT_ID.test(tid) || !(await tenantExists(env, tid))) return null;
  const idp = await settingsFor(env, tid);
  if (!idp) return null;
  try {
    const { payload } = await jwtVerify(token, keySetFor(env, tid, idp), {
      algorithms: idp.algorithms,
      issuer: idp.issuer,
      audience: idp.audience,
      requiredClaims: ["exp", "sub"],
    });
    const claimed = payload.agents;
    if (claimed !== undefined && !(Array.isArray(claimed) && claimed.every((agent) => typeof agent === "string"))) return null;
    const agents = claimed === undefined ? idp.agentIds : idp.agentIds.filter((agent) => (claimed as string[]).includes(agent));
    const asked = typeof payload.scope === "string" ? payload.scope.split(" ") : null;
    const scope: Scope[] = idp.scopes.filter((s) => asked === null || asked.includes(s));
    return { sub: payload.sub!, tid, agents, scope, exp: payload.exp! };
  } catch (error) {
    logEvent("info", "idp token refused", { tenantId: tid, reason: (error as { code?: string } | null)?.code ?? "error" });
    return null;
  }
}

async function settingsFor(env: Env, tenantId: string): Promise<IdentityProvider | null> {
  const cached = settingsCache.get(tenantId);
  if (cached !== undefined) return cached;
  const idp = await tenantStub(env, tenantId).identityProvider();
  settingsCache.set(tenantId, idp, config.jwks.settingsTtlMs);
  return idp;
}

/** One jose remote key set per (tenant, JWKS URL): its cache survives between requests in this isolate. */
function keySetFor(env: Env, tenantId: string, idp: IdentityProvider): ReturnType<typeof createRemoteJWKSet> {
  const key = `${tenantId}|${idp.jwksUrl}`;
  const existing = keySets.get(key);
  if (existing) return existing;
  const url = new URL(idp.jwksUrl);
  const mode = deploymentMode(env.VIGIL_MODE);
  const keySet = createRemoteJWKSet(url, {
    timeoutDuration: config.jwks.timeoutMs,
    cacheMaxAge: config.jwks.cacheMaxAgeMs,
    cooldownDuration: cooldownMs(env),
    [customFetch]: async (target: string, init: RequestInit) => {
      const sent = await sendThroughDoor({
        url: target,
        purpose: "jwks",
        allowedHosts: [url.host],
        mode,
        init: { method: "GET", ...(init.headers && { headers: init.headers }), ...(init.signal && { signal: init.signal }) },
        record: (entry) => logEvent(entry.outcome === "sent" ? "info" : "warn", "jwks fetched", { tenantId, ...entry }),
      });
      if (!sent.ok) throw new Error(`the JWKS request was refused: ${sent.message}`);
      return sent.response;
    },
  });
  keySets.set(key, keySet, KEY_SET_LIFETIME_MS);
  return keySet;
}

/** Test setting (the `settings` seam only): `VIGIL_JWKS_COOLDOWN_MS` shortens the unknown-`kid` refetch gap so a test can rotate keys without waiting. */
function cooldownMs(env: Env): number {
  const override = Number(testOnly(env, env.VIGIL_JWKS_COOLDOWN_MS) ?? NaN);
  return Number.isFinite(override) && override >= 0 ? override : config.jwks.cooldownMs;
}
