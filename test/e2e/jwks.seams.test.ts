import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw, type VigilServer } from "./harness";
import { sharedSeamsServer } from "./shared-server";

/** A real JWKS endpoint on 127.0.0.1 (the tenant's IdP); the test decides which public keys it publishes. */
class JwksServer {
  keys: JWK[] = [];
  hits = 0;
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.url !== "/.well-known/jwks.json") return void res.writeHead(404).end();
      this.hits++;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface SigningKey {
  kid: string;
  alg: "RS256" | "ES256";
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string, alg: "RS256" | "ES256"): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

const ISSUER = "https://idp.example.com/";
const AUDIENCE = "vigil-widget-acme";

let server: VigilServer;
let jwks: JwksServer;
let tenantId: string;
let agentId: string;
let rsa: SigningKey;
let ec: SigningKey;

function token(key: SigningKey, overrides: { iss?: string; aud?: string; exp?: number; tid?: string; sub?: string } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tid: overrides.tid ?? tenantId })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setSubject(overrides.sub ?? "idp-user-1")
    .setIssuer(overrides.iss ?? ISSUER)
    .setAudience(overrides.aud ?? AUDIENCE)
    .setIssuedAt(now - 5)
    .setExpirationTime(overrides.exp ?? now + 600)
    .sign(key.privateKey);
}

const getAgent = (bearer: string) => raw(`${server.url}/v1/agents/${agentId}`, { headers: { authorization: `Bearer ${bearer}` } });

beforeAll(async () => {
  jwks = new JwksServer();
  await jwks.start();
  [rsa, ec] = await Promise.all([signingKey("rsa-1", "RS256"), signingKey("ec-1", "ES256")]);
  jwks.keys = [rsa.jwk, ec.jwk];
  // A zero cooldown lets the unknown-kid refetch happen at once (a test seam; production waits config.jwks.cooldownMs).
  server = sharedSeamsServer();
  const tenant = await server.tenant("idp");
  tenantId = tenant.tenantId;
  agentId = (await tenant.client.createAgent({ kind: "support", displayName: "Support" })).id;
  const policy = await raw(`${server.url}/v1/policy`, {
    method: "PUT",
    headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ identityProvider: { jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, agentIds: [agentId], scopes: ["agents:read"] } }),
  });
  expect(policy.status, policy.text).toBe(200);
});

afterAll(async () => {
  await jwks?.stop();
});

describe("tenant identity providers (JWKS)", () => {
  it("accepts RS256 and ES256 tokens from the tenant's IdP, fetching the key set once through the egress door", async () => {
    const before = jwks.hits;
    const viaRsa = await getAgent(await token(rsa));
    expect(viaRsa.status, viaRsa.text).toBe(200);
    expect(viaRsa.body).toMatchObject({ id: agentId });
    expect((await getAgent(await token(ec))).status).toBe(200);
    expect((await getAgent(await token(rsa, { sub: "idp-user-2" }))).status).toBe(200);
    // Cached: three verifications, one fetch of the key set.
    expect(jwks.hits - before).toBe(1);
  });

  it("confines IdP users to the registered agents and scopes", async () => {
    const bearer = await token(rsa);
    expect((await raw(`${server.url}/v1/agents/a_other00000000000`, { headers: { authorization: `Bearer ${bearer}` } })).status).toBe(404);
    const write = await raw(`${server.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi" }),
    });
    expect(write.status).toBe(403);
  });

  it("refuses expired, wrong-audience, wrong-issuer, tampered and foreign-tenant tokens with 401", async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = await token(rsa);
    const [header, payload, signature] = good.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: "someone-else" })).toString("base64url")}.${signature}`;
    const stranger = await signingKey("rsa-1", "RS256"); // same kid, a key the IdP never published
    const cases: Record<string, string> = {
      expired: await token(rsa, { exp: now - 60 }),
      wrongAudience: await token(ec, { aud: "someone-elses-app" }),
      wrongIssuer: await token(rsa, { iss: "https://evil.example.com/" }),
      tampered,
      forgedKey: await token(stranger),
      unknownTenant: await token(rsa, { tid: "t0000000000000000" }),
    };
    for (const [name, bearer] of Object.entries(cases)) {
      const answer = await getAgent(bearer);
      expect({ name, status: answer.status, code: (answer.body as { code?: string }).code }).toEqual({ name, status: 401, code: "unauthorized" });
    }
  });

  it("ends an event stream opened with an IdP token at the token's exp", async () => {
    const exp = Math.floor(Date.now() / 1000) + 4;
    const bearer = await token(ec, { exp });
    const stream = await fetch(`${server.url}/v1/agents/${agentId}/events`, { headers: { authorization: `Bearer ${bearer}`, accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const cap = Date.now() + 15_000;
    for (;;) {
      const chunk = await Promise.race([reader.read(), new Promise<"cap">((done) => setTimeout(() => done("cap"), Math.max(0, cap - Date.now())))]);
      if (chunk === "cap") throw new Error(`the stream outlived its token; got: ${text}`);
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(text).toMatch(/event: stream\.closed\ndata: \{"type":"stream\.closed","reason":"token_expired"\}/);
    expect((await getAgent(bearer)).status).toBe(401);
  });

  it("refetches the key set when a token names an unknown kid (key rotation)", async () => {
    const rotated = await signingKey("rsa-2", "RS256");
    const unpublished = await getAgent(await token(rotated));
    expect(unpublished.status).toBe(401);
    jwks.keys = [rotated.jwk, ec.jwk];
    const before = jwks.hits;
    const answer = await getAgent(await token(rotated));
    expect(answer.status, answer.text).toBe(200);
    expect(jwks.hits - before).toBe(1);
  });
});
