/**
 * A provider key, once stored, exists only where it must: sealed in the tenant's SQLite and in the
 * Authorization header the scripted provider receives. It must appear in no table of any Durable
 * Object, no agent event, message or run trace, no audit entry and no line wrangler printed.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, ScriptedOpenAI } from "../support/scripted-openai";
import { collectSse, DevServer, raw } from "./harness";

let server: DevServer;
let provider: ScriptedOpenAI;
beforeAll(async () => {
  provider = await ScriptedOpenAI.start();
  server = await DevServer.start({ logLevel: "log", vars: { VIGIL_FAULTS: "dumps" } });
});
afterAll(async () => {
  await server?.dispose();
  await provider?.close();
});

type Json = Record<string, any>;

describe("provider secrets never leak", () => {
  it("a stored key reaches the provider and nothing else: tables, events, runs, audit, logs", async () => {
    const secretKey = `sk-e2e-${randomBytes(24).toString("hex")}`;
    const { apiKey, tenantId } = await server.tenant("secrets");
    const call = async (method: string, path: string, body?: unknown, token = apiKey) => {
      const res = await raw<Json>(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res;
    };
    const texts: Array<[string, string]> = [];
    const keep = (where: string, text: string) => {
      texts.push([where, text]);
      return text;
    };

    const stored = await call("POST", "/v1/providers/secrets", { provider: "scripted", name: "e2e", apiKey: secretKey });
    expect(stored.status, stored.text).toBe(201);
    keep("secret create answer", stored.text);
    const endpoint = { id: "scripted", kind: "openai-compatible", baseUrl: provider.baseUrl, secretRefId: stored.body.id, policyVersion: "v1", models: ["gpt-test"] };
    const policy = await call("PUT", "/v1/policy", { providers: [endpoint] });
    expect(policy.status, policy.text).toBe(200);
    expect((await call("POST", "/v1/providers/consents", { provider: "scripted", model: "gpt-test", policyVersion: "v1" })).status).toBe(201);

    // One run that uses the key, one the policy denies, one after the key is revoked.
    provider.enqueue(reply.text(["hello", " from", " the provider"]));
    const agent = (await call("POST", "/v1/agents", { kind: "coach", displayName: "Remote", model: "openai-compatible:scripted/gpt-test" })).body;
    const denied = (await call("POST", "/v1/agents", { kind: "coach", displayName: "Denied", model: "openai:gpt-4o-mini" })).body;
    const client = server.client(apiKey);
    const first = await client.sendMessage(agent.id, { text: "hi there" });
    const firstRun = await client.waitForRun(agent.id, first.runKey, { timeoutMs: 60_000 });
    expect(firstRun.status, JSON.stringify(firstRun)).toBe("completed");
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]!.headers.authorization).toBe(`Bearer ${secretKey}`);

    // While the key is live it is stored sealed only.
    const liveDump = await call("GET", `/__debug/tenants/${tenantId}/dump`, undefined, server.adminToken);
    expect(liveDump.body.tables.provider_secrets).toEqual([expect.objectContaining({ id: stored.body.id, ciphertext: expect.stringMatching(/^v2\.[0-9a-f]{8}\./) })]);
    keep("tenant tables while the key is live", liveDump.text);

    const deniedRun = await client.waitForRun(denied.id, (await client.sendMessage(denied.id, { text: "hi" })).runKey, { timeoutMs: 60_000 });
    expect(deniedRun.status).not.toBe("completed");
    expect((await call("DELETE", `/v1/providers/secrets/${stored.body.id}`)).status).toBe(200);
    const revokedRun = await client.waitForRun(agent.id, (await client.sendMessage(agent.id, { text: "again" })).runKey, { timeoutMs: 60_000 });
    expect(revokedRun.status).not.toBe("completed");
    expect(provider.requests).toHaveLength(1);

    // Everything the system kept or showed.
    const tenantDump = await call("GET", `/__debug/tenants/${tenantId}/dump`, undefined, server.adminToken);
    expect(tenantDump.status).toBe(200);
    keep("tenant tables", tenantDump.text);
    expect(tenantDump.body.tables.provider_secrets).toEqual([expect.objectContaining({ id: stored.body.id, ciphertext: "", revoked_at: expect.any(String) })]);
    for (const id of [agent.id, denied.id]) {
      const dump = await call("GET", `/__debug/tenants/${tenantId}/agents/${id}/dump`, undefined, server.adminToken);
      expect(dump.status).toBe(200);
      expect(Object.keys(dump.body.tables)).toEqual(expect.arrayContaining(["messages", "events", "runs"]));
      keep(`agent ${id} tables`, dump.text);
      keep(`agent ${id} messages`, (await call("GET", `/v1/agents/${id}/messages?limit=200`)).text);
      const runs = await call("GET", `/v1/agents/${id}/runs?limit=200`);
      keep(`agent ${id} runs`, runs.text);
      for (const run of runs.body.data) keep(`agent ${id} run ${run.runKey}`, (await call("GET", `/v1/agents/${id}/runs/${run.runKey}`)).text);
      const lastSeq = Math.max(...(dump.body.tables.events as Json[]).map((event) => Number(event.seq)));
      const stream = await fetch(`${server.url}/v1/agents/${id}/events?after=0`, { headers: { authorization: `Bearer ${apiKey}`, accept: "text/event-stream" } });
      const frames = await collectSse(stream, (seen) => seen.some((frame) => Number(frame.id) >= lastSeq));
      expect(frames.length).toBeGreaterThan(0);
      keep(`agent ${id} events`, JSON.stringify(frames));
    }
    const auditEntries: Json[] = [];
    for (let cursor: string | null = ""; cursor !== null; ) {
      const page: Json = (await call("GET", `/v1/audit?limit=200${cursor ? `&cursor=${cursor}` : ""}`)).body;
      auditEntries.push(...page.data);
      cursor = page.nextCursor;
    }
    keep("audit", JSON.stringify(auditEntries));
    expect(auditEntries.map((entry) => entry.action)).toEqual(expect.arrayContaining(["provider_secret.created", "provider_secret.revoked", "policy.updated", "provider_consent.recorded", "policy.denied"]));
    expect(auditEntries.filter((entry) => entry.action === "policy.denied").map((entry) => entry.detail.code).sort()).toEqual(["provider_not_allowed", "secret_unavailable"]);
    keep("policy", (await call("GET", "/v1/policy")).text);
    keep("secret list", (await call("GET", "/v1/providers/secrets")).text);
    keep("wrangler output", server.logs(400));

    // The search works: the ciphertext-free dump still names the secret, the key's bytes are found where they were sent.
    expect(texts.find(([where]) => where === "tenant tables")![1]).toContain(stored.body.id);
    expect(JSON.stringify(provider.requests[0]!.headers)).toContain(secretKey);
    const encodings = [secretKey, Buffer.from(secretKey).toString("hex"), Buffer.from(secretKey).toString("base64"), Buffer.from(secretKey).toString("base64url")];
    const leaks = texts.filter(([, text]) => encodings.some((encoding) => text.includes(encoding))).map(([where]) => where);
    expect(leaks).toEqual([]);
  });
});
