import { env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { tenantJwtKey } from "../../src/http/jwt";
import { ADMIN, api, createAgent, createTenant } from "./helpers";

describe("tenancy and auth", () => {
  it("creates a tenant only with the operator token and returns its first key once", async () => {
    expect((await api("POST", "/v1/tenants", { body: { name: "x" } })).status).toBe(401);
    expect((await api("POST", "/v1/tenants", { key: "wrong", body: { name: "x" } })).status).toBe(401);
    const res = await api("POST", "/v1/tenants", { key: ADMIN, body: { name: "x" } });
    expect(res.status).toBe(201);
    expect(res.body.apiKey).toMatch(/^vk_t[0-9a-z]{16}_/);
    const keys = await api("GET", "/v1/keys", { key: res.body.apiKey });
    expect(JSON.stringify(keys.body)).not.toContain(res.body.apiKey.slice(24));
  });

  it("refuses every near miss of the operator token: a prefix, an extension, one changed character, an empty bearer", async () => {
    for (const near of [ADMIN.slice(0, -1), `${ADMIN}x`, `${ADMIN.slice(0, -1)}X`, ADMIN.toUpperCase(), " "]) {
      expect((await api("GET", "/v1/tenants/t0000000000000000/erasure", { key: near })).status, near).toBe(401);
    }
    expect((await api("GET", "/v1/tenants/t0000000000000000/erasure", { key: ADMIN })).status).toBe(404);
  });

  it("answers problem+json with a stable code", async () => {
    const res = await api("GET", "/v1/agents", { key: "vk_nope" });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("revoking a key shuts it out at once", async () => {
    const { key } = await createTenant();
    const created = await api("POST", "/v1/keys", { key, body: { name: "ci", scopes: ["agents:read"] } });
    expect(created.status).toBe(201);
    expect((await api("GET", "/v1/agents", { key: created.body.key })).status).toBe(200);
    expect((await api("DELETE", `/v1/keys/${created.body.id}`, { key })).status).toBe(200);
    expect((await api("GET", "/v1/agents", { key: created.body.key })).status).toBe(401);
  });

  it("enforces key scopes", async () => {
    const { key } = await createTenant();
    const reader = await api("POST", "/v1/keys", { key, body: { scopes: ["agents:read"] } });
    const res = await api("POST", "/v1/agents", { key: reader.body.key, body: { kind: "a", displayName: "A" } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
  });

  it("hides one tenant's agents from another (404, not 403)", async () => {
    const a = await createTenant("a");
    const b = await createTenant("b");
    const agent = await createAgent(a.key);
    for (const [method, path, body] of [
      ["GET", `/v1/agents/${agent.id}`, undefined],
      ["PATCH", `/v1/agents/${agent.id}`, { displayName: "stolen" }],
      ["POST", `/v1/agents/${agent.id}/messages`, { text: "hi" }],
      ["GET", `/v1/agents/${agent.id}/messages`, undefined],
      ["GET", `/v1/agents/${agent.id}/events`, undefined],
      ["GET", `/v1/agents/${agent.id}/runs`, undefined],
      ["POST", `/v1/agents/${agent.id}/pause`, undefined],
      ["DELETE", `/v1/agents/${agent.id}`, undefined],
    ] as const) {
      const res = await api(method, path, { key: b.key, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await api("GET", "/v1/agents", { key: b.key })).body.data).toEqual([]);
    expect((await api("GET", `/v1/agents/${agent.id}`, { key: a.key })).body.displayName).toBe("Coach");
  });

  it("widget tokens reach only their agents, and bad tokens get 401", async () => {
    const a = await createTenant();
    const mine = await createAgent(a.key);
    const other = await createAgent(a.key);
    const minted = await api("POST", "/v1/tokens", { key: a.key, body: { sub: "user-1", agents: [mine.id], ttlSeconds: 600 } });
    expect(minted.status).toBe(201);
    const token = minted.body.token as string;
    expect((await api("GET", `/v1/agents/${mine.id}`, { key: token })).status).toBe(200);
    expect((await api("GET", `/v1/agents/${other.id}`, { key: token })).status).toBe(404);
    expect((await api("POST", "/v1/keys", { key: token, body: {} })).status).toBe(403);

    const [h, p, s] = token.split(".");
    const tampered = `${h}.${p!.slice(0, -2)}${p!.endsWith("A") ? "B" : "A"}${p!.slice(-1)}.${s}`;
    expect((await api("GET", `/v1/agents/${mine.id}`, { key: tampered })).status).toBe(401);

    const now = Math.floor(Date.now() / 1000);
    const sign = async (tid: string, claims: Record<string, unknown>, keyTenant = tid) =>
      new SignJWT({ tid, agents: [mine.id], scope: "agents:read agents:write", ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("user-1")
        .setIssuer("vigil")
        .setAudience((claims.aud as string) ?? "vigil-widget")
        .setIssuedAt(now - 7200)
        .setExpirationTime((claims.exp as number) ?? now + 600)
        .sign(await tenantJwtKey(env.VIGIL_MASTER_KEY, keyTenant));
    const expired = await sign(a.tenantId, { exp: now - 60 });
    expect((await api("GET", `/v1/agents/${mine.id}`, { key: expired })).status).toBe(401);
    const wrongAudience = await sign(a.tenantId, { aud: "someone-else" });
    expect((await api("GET", `/v1/agents/${mine.id}`, { key: wrongAudience })).status).toBe(401);
    const b = await createTenant("b");
    const wrongTenant = await sign(b.tenantId, {}, a.tenantId);
    expect((await api("GET", `/v1/agents/${mine.id}`, { key: wrongTenant })).status).toBe(401);
  });

  it("refuses to mint a token for an agent of another tenant, or longer than an hour", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const theirs = await createAgent(b.key);
    expect((await api("POST", "/v1/tokens", { key: a.key, body: { sub: "u", agents: [theirs.id] } })).status).toBe(404);
    const mine = await createAgent(a.key);
    const long = await api("POST", "/v1/tokens", { key: a.key, body: { sub: "u", agents: [mine.id], ttlSeconds: 7200 } });
    expect(long.status).toBe(400);
    expect(long.body.errors[0].path).toBe("ttlSeconds");
  });
});
