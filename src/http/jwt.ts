import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { config, type Scope } from "../config";
import { requireMasterKey } from "../core/egress/master-key";
import { allKeys, keyByVersion, keyringOf, type Keyring } from "../core/egress/keyring";

const encoder = new TextEncoder();

/**
 * Each tenant's HS256 signing key is derived from the master key (HMAC(master, "vigil-jwt|" + tenantId)),
 * so a token signed for tenant A can never verify as tenant B and no per-tenant secret is stored.
 */
export async function tenantJwtKey(masterKey: string, tenantId: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(requireMasterKey(masterKey)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`vigil-jwt|${tenantId}`)));
}

export interface WidgetClaims {
  sub: string;
  tid: string;
  agents: string[];
  scope: Scope[];
  /** Expiry (seconds since the epoch) of a verified token. */
  exp?: number;
}

/** Signed under the keyring's current key; the protected header's `kid` names its version. */
export async function mintWidgetToken(keys: string | Keyring, claims: WidgetClaims, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
  const { current } = keyringOf(keys);
  const ttl = Math.min(ttlSeconds, config.jwt.maxTtlSeconds);
  const issuedAt = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ tid: claims.tid, agents: claims.agents, scope: claims.scope.join(" ") })
    .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: current.kid })
    .setSubject(claims.sub)
    .setIssuer(config.jwt.issuer)
    .setAudience(config.jwt.audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttl)
    .sign(await tenantJwtKey(current.secret, claims.tid));
  return { token, expiresAt: new Date((issuedAt + ttl) * 1000).toISOString() };
}

/**
 * Verifies signature, algorithm, issuer, audience, expiry and claim shapes; null on any failure. The key is the one
 * of the ring its `kid` names (a token without one, minted before the keyring, is tried under every key).
 */
export async function verifyWidgetToken(keys: string | Keyring, token: string): Promise<WidgetClaims | null> {
  const ring = keyringOf(keys);
  let tid: unknown;
  let kid: unknown;
  try {
    tid = decodeJwt(token).tid;
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return null;
  }
  if (typeof tid !== "string" || !/^t[0-9a-z]{16}$/.test(tid)) return null;
  const candidates = kid === undefined ? allKeys(ring) : typeof kid === "string" ? [keyByVersion(ring, kid)].filter((key) => key !== null) : [];
  for (const key of candidates) {
    const claims = await verifyUnder(key.secret, tid, token);
    if (claims) return claims;
  }
  return null;
}

async function verifyUnder(secret: string, tid: string, token: string): Promise<WidgetClaims | null> {
  try {
    const { payload } = await jwtVerify(token, await tenantJwtKey(secret, tid), {
      algorithms: ["HS256"],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      requiredClaims: ["exp", "sub"],
    });
    const agents = payload.agents;
    const scope = typeof payload.scope === "string" ? payload.scope.split(" ") : [];
    if (!Array.isArray(agents) || !agents.every((agent) => typeof agent === "string")) return null;
    if (payload.exp! - (payload.iat ?? 0) > config.jwt.maxTtlSeconds) return null;
    const allowed = scope.filter((s): s is Scope => s === "agents:read" || s === "agents:write");
    return { sub: payload.sub!, tid, agents, scope: allowed, exp: payload.exp! };
  } catch {
    return null;
  }
}
