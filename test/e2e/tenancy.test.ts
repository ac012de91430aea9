import { createHmac } from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { VigilApiError, type VigilClient } from "../../src/client";
import { raw, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;

beforeAll(async () => {
  server = sharedServer();
});

/** Asserts a call fails with this status and stable code. */
async function rejects(call: Promise<unknown>, status: number, code: string): Promise<VigilApiError> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, `expected ${status} ${code}`).toBeInstanceOf(VigilApiError);
  const apiError = error as VigilApiError;
  expect({ status: apiError.status, code: apiError.code }).toEqual({ status, code });
  return apiError;
}

/** Signs a widget token the way the server does (HS256, key = HMAC(master, "vigil-jwt|" + tid)). */
async function forgeToken(options: { signFor: string; claims: Record<string, unknown>; audience?: string; issuedAt?: number; expiresAt?: number; subject?: string }): Promise<string> {
  const key = createHmac("sha256", server.masterKey).update(`vigil-jwt|${options.signFor}`).digest();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(options.claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(options.subject ?? "end-user-1")
    .setIssuer("vigil")
    .setAudience(options.audience ?? "vigil-widget")
    .setIssuedAt(options.issuedAt ?? now)
    .setExpirationTime(options.expiresAt ?? now + 600)
    .sign(key);
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

describe("API keys", () => {
  it("a revoked key is refused at once with 401 problem+json, and keys are listed without secrets", async () => {
    const { client } = await server.tenant("revoke");
    const second = await client.createKey({ name: "second", scopes: ["agents:read"] });
    const secondClient = client.withToken(second.key);
    await expect(secondClient.listAgents()).resolves.toMatchObject({ data: [] });

    const revoked = await client.revokeKey(second.id);
    expect(revoked.revokedAt).not.toBeNull();

    const response = await raw(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${second.key}` } });
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    expect(response.body).toMatchObject({ status: 401, code: "unauthorized", type: expect.any(String), title: expect.any(String), detail: expect.any(String) });

    const listing = await client.listKeys();
    expect(listing.data.map((key) => key.id)).toContain(second.id);
    expect(JSON.stringify(listing)).not.toContain(second.key);
    expect(listing.data.every((key) => !("key" in key) && !("hash" in key))).toBe(true);
  });

  it("a key limited to agents:read cannot write (403 forbidden)", async () => {
    const { client } = await server.tenant("scopes");
    const reader = client.withToken((await client.createKey({ scopes: ["agents:read"] })).key);
    await expect(reader.listAgents()).resolves.toBeDefined();
    await rejects(reader.createAgent({ kind: "coach", displayName: "Coach" }), 403, "forbidden");
    await rejects(reader.createKey({}), 403, "forbidden");
  });

  it("the operator endpoint refuses API keys, garbage and missing credentials", async () => {
    const { apiKey } = await server.tenant("operator");
    for (const authorization of [`Bearer ${apiKey}`, "Bearer nope", "Basic abc", undefined]) {
      const response = await raw(`${server.url}/v1/tenants`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ name: "x" }),
      });
      expect(response.status, String(authorization)).toBe(401);
      expect(response.body).toMatchObject({ code: "unauthorized" });
    }
    for (const token of ["vk_garbage", `${apiKey}x`, "not-a-jwt", ""]) {
      const response = await raw(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status, token).toBe(401);
    }
  });
});

describe("widget JWTs", () => {
  let tenantA: { tenantId: string; client: VigilClient };
  let tenantB: { tenantId: string; client: VigilClient };
  let allowed: string;
  let other: string;

  beforeAll(async () => {
    tenantA = await server.tenant("jwt-a");
    tenantB = await server.tenant("jwt-b");
    allowed = (await tenantA.client.createAgent({ kind: "coach", displayName: "Allowed" })).id;
    other = (await tenantA.client.createAgent({ kind: "coach", displayName: "Other" })).id;
  });

  it("a minted token reaches only the agents it names, and cannot manage the tenant", async () => {
    const minted = await tenantA.client.mintToken({ sub: "user-1", agents: [allowed], ttlSeconds: 600 });
    expect(Date.parse(minted.expiresAt) - Date.now()).toBeGreaterThan(500_000);
    const widget = tenantA.client.withToken(minted.token);
    await expect(widget.getAgent(allowed)).resolves.toMatchObject({ id: allowed });
    await expect(widget.sendMessage(allowed, { text: "hi from the widget" })).resolves.toMatchObject({ runKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await widget.listAgents()).data.map((agent) => agent.id)).toEqual([allowed]);
    await rejects(widget.getAgent(other), 404, "not_found");
    await rejects(widget.listKeys(), 403, "forbidden");
    await rejects(widget.mintToken({ sub: "x", agents: [allowed] }), 403, "forbidden");
  });

  it("a token forged with the right key is accepted (so the 401s below are about the claims)", async () => {
    const token = await forgeToken({ signFor: tenantA.tenantId, claims: { tid: tenantA.tenantId, agents: [allowed], scope: "agents:read agents:write" } });
    await expect(tenantA.client.withToken(token).getAgent(allowed)).resolves.toMatchObject({ id: allowed });
  });

  it("expired, tampered, wrong-tenant, wrong-audience and over-long tokens get 401", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { tid: tenantA.tenantId, agents: [allowed], scope: "agents:read agents:write" };
    const valid = await forgeToken({ signFor: tenantA.tenantId, claims });
    const [header, , signature] = valid.split(".");
    const cases: Record<string, string> = {
      expired: await forgeToken({ signFor: tenantA.tenantId, claims, issuedAt: now - 600, expiresAt: now - 60 }),
      "tampered payload (agents widened)": `${header}.${b64url({ ...claims, agents: [allowed, other], sub: "end-user-1", iss: "vigil", aud: "vigil-widget", iat: now, exp: now + 600 })}.${signature}`,
      "tampered signature": `${valid.slice(0, -4)}${valid.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`,
      "wrong tenant (signed with tenant B's key, claims tenant A)": await forgeToken({ signFor: tenantB.tenantId, claims }),
      "wrong audience": await forgeToken({ signFor: tenantA.tenantId, claims, audience: "someone-else" }),
      "lifetime over one hour": await forgeToken({ signFor: tenantA.tenantId, claims, issuedAt: now, expiresAt: now + 7200 }),
      "alg none": `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ ...claims, sub: "u", iss: "vigil", aud: "vigil-widget", iat: now, exp: now + 600 })}.`,
    };
    for (const [name, token] of Object.entries(cases)) {
      const response = await raw(`${server.url}/v1/agents/${allowed}`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status, name).toBe(401);
      expect(response.headers.get("content-type"), name).toContain("application/problem+json");
      expect(response.body, name).toMatchObject({ code: "unauthorized" });
    }
  });

  it("tenant B's genuine token names tenant A's agent in vain: 404, and minting for it is refused", async () => {
    const bAgent = (await tenantB.client.createAgent({ kind: "coach", displayName: "B" })).id;
    const forB = await tenantB.client.mintToken({ sub: "u", agents: [bAgent] });
    await rejects(tenantB.client.withToken(forB.token).getAgent(allowed), 404, "not_found");
    await rejects(tenantB.client.mintToken({ sub: "u", agents: [allowed] }), 404, "not_found");
    const forged = await forgeToken({ signFor: tenantB.tenantId, claims: { tid: tenantB.tenantId, agents: [allowed], scope: "agents:read agents:write" } });
    await rejects(tenantB.client.withToken(forged).getAgent(allowed), 404, "not_found");
  });
});

describe("cross-tenant isolation", () => {
  it("tenant B's key gets 404 not_found on every route of tenant A's agent, and nothing changes", async () => {
    const a = await server.tenant("iso-a");
    const b = await server.tenant("iso-b");
    const agent = await a.client.createAgent({ kind: "coach", displayName: "Private" });
    const sent = await a.client.sendMessage(agent.id, { text: "secret" });
    await a.client.waitForRun(agent.id, sent.runKey);
    const base = `${server.url}/v1/agents/${agent.id}`;
    const json = { "content-type": "application/json" };
    const attempts: Array<[string, string, RequestInit]> = [
      ["GET agent", base, {}],
      ["PATCH agent", base, { method: "PATCH", headers: json, body: JSON.stringify({ displayName: "Owned" }) }],
      ["DELETE agent", base, { method: "DELETE" }],
      ["GET state", `${base}/state`, {}],
      ["POST pause", `${base}/pause`, { method: "POST" }],
      ["POST resume", `${base}/resume`, { method: "POST" }],
      ["POST wake", `${base}/wake`, { method: "POST" }],
      ["POST messages", `${base}/messages`, { method: "POST", headers: json, body: JSON.stringify({ text: "hi" }) }],
      ["POST messages (stream)", `${base}/messages`, { method: "POST", headers: { ...json, accept: "text/event-stream" }, body: JSON.stringify({ text: "hi" }) }],
      ["GET messages", `${base}/messages`, {}],
      ["GET events", `${base}/events`, { headers: { accept: "text/event-stream" } }],
      ["GET events after", `${base}/events?after=0`, {}],
      ["GET runs", `${base}/runs`, {}],
      ["GET run", `${base}/runs/${sent.runKey}`, {}],
    ];
    for (const [name, url, init] of attempts) {
      const response = await raw(url, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${b.apiKey}` } });
      expect(response.status, name).toBe(404);
      expect(response.headers.get("content-type"), name).toContain("application/problem+json");
      expect(response.body, name).toMatchObject({ code: "not_found", status: 404 });
    }
    expect((await b.client.listAgents()).data).toEqual([]);

    const after = await a.client.getAgent(agent.id);
    expect(after).toMatchObject({ displayName: "Private", lifecycle: "active", version: agent.version });
    const runs = await a.client.listRuns(agent.id);
    expect(runs.data.map((run) => run.runKey)).toEqual([sent.runKey]);
    const history = await a.client.listMessages(agent.id);
    expect(history.data.map((message) => message.text)).toEqual(["echo: secret", "secret"]);
  });
});

describe("Idempotency-Key", () => {
  it("creating an agent twice with one key and body answers the same agent once; another body is 409", async () => {
    const { client, apiKey } = await server.tenant("idem-agents");
    const body = JSON.stringify({ kind: "coach", displayName: "Once" });
    const post = (payload: string, key: string) =>
      raw<any>(`${server.url}/v1/agents`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": key }, body: payload });
    const first = await post(body, "create-1");
    const second = await post(body, "create-1");
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect((await client.listAgents()).data.map((agent) => agent.id)).toEqual([first.body.id]);

    const conflict = await post(JSON.stringify({ kind: "coach", displayName: "Twice" }), "create-1");
    expect(conflict.status).toBe(409);
    expect(conflict.headers.get("content-type")).toContain("application/problem+json");
    expect(conflict.body).toMatchObject({ code: "idempotency_conflict" });
    expect((await client.listAgents()).data).toHaveLength(1);

    const fresh = await post(body, "create-2");
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
  });

  it("a retried message with one key is one turn and one run; another text under that key is 409", async () => {
    const { client } = await server.tenant("idem-messages");
    const agent = await client.createAgent({ kind: "coach", displayName: "Coach" });
    const first = await client.sendMessage(agent.id, { text: "only once" }, { idempotencyKey: "turn-1" });
    const again = await client.sendMessage(agent.id, { text: "only once" }, { idempotencyKey: "turn-1" });
    expect(again.runKey).toBe(first.runKey);
    await rejects(client.sendMessage(agent.id, { text: "something else" }, { idempotencyKey: "turn-1" }), 409, "idempotency_conflict");
    await client.waitForRun(agent.id, first.runKey);
    expect((await client.listRuns(agent.id)).data.map((run) => run.runKey)).toEqual([first.runKey]);
    expect((await client.listMessages(agent.id)).data.map((message) => message.text)).toEqual(["echo: only once", "only once"]);
  });

  it("keys, tokens and tenants replay too; the same key on another route is independent", async () => {
    const operator = server.client();
    const t1 = await operator.createTenant({ name: "idem-tenant" }, { idempotencyKey: "tenant-1" });
    const t2 = await operator.createTenant({ name: "idem-tenant" }, { idempotencyKey: "tenant-1" });
    expect(t2).toEqual(t1);
    const client = server.client(t1.apiKey);
    const k1 = await client.createKey({ name: "ci" }, { idempotencyKey: "same" });
    const k2 = await client.createKey({ name: "ci" }, { idempotencyKey: "same" });
    expect(k2).toEqual(k1);
    expect((await client.listKeys()).data).toHaveLength(2);
    // The record is scoped to method + path: "same" on /v1/agents is a new request, not a conflict.
    const agent = await client.createAgent({ kind: "coach", displayName: "Scoped" }, { idempotencyKey: "same" });
    expect(agent.id).toMatch(/^ag_/);
  });
});
