/**
 * Issue 13.7: every secret a POST hands out (a tenant's first key, an API key, a widget token, webhook,
 * source and tool signing secrets, an agent trigger URL) is answered once — and again, identically, to a
 * retry with the same Idempotency-Key — yet stored nowhere in plaintext: no table of the operator's,
 * the tenant's or the agent's Durable Object, no event, no audit entry, no line wrangler printed.
 * `?access_token=` works only for a widget token on an event stream.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectSse, DevServer, raw } from "./harness";

let server: DevServer;
beforeAll(async () => {
  server = await DevServer.start({ logLevel: "log", vars: { VIGIL_FAULTS: "dumps" } });
});
afterAll(async () => {
  await server?.dispose();
});

type Json = Record<string, any>;

describe("secrets stay secret", () => {
  it("secret-returning POSTs replay their answer to the same Idempotency-Key, and the secret is found in no table, event, audit entry or log line", async () => {
    const call = async (method: string, path: string, token: string, body?: unknown, idempotencyKey?: string) =>
      raw<Json>(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const secrets: Array<[string, string]> = [];
    /** POSTs twice with one Idempotency-Key: the replay is the same answer, flagged as a replay. */
    const twice = async (what: string, path: string, token: string, body: unknown, pick: (answer: Json) => string) => {
      const idem = `idem-${randomBytes(8).toString("hex")}`;
      const first = await call("POST", path, token, body, idem);
      expect(first.status, `${what}: ${first.text}`).toBeLessThan(300);
      const again = await call("POST", path, token, body, idem);
      // (A retried trigger rotation answers 200 with the first rotation's descriptor: that route's documented status.)
      expect(again.status, `${what} replay: ${again.text}`).toBe(path.endsWith("/trigger") ? 200 : first.status);
      expect(again.body, what).toEqual(first.body);
      const secret = pick(first.body);
      expect(typeof secret === "string" && secret.length >= 16, what).toBe(true);
      secrets.push([what, secret]);
      return first.body;
    };

    const tenant = await twice("tenant's first API key", "/v1/tenants", server.adminToken, { name: "secrets" }, (a) => a.apiKey);
    const tenantId: string = tenant.tenant.id;
    const apiKey: string = tenant.apiKey;
    await twice("API key", "/v1/keys", apiKey, { scopes: ["agents:read"] }, (a) => a.key);
    const agent = (await call("POST", "/v1/agents", apiKey, { kind: "coach", displayName: "Vault" })).body;
    const widget = await twice("widget token", "/v1/tokens", apiKey, { sub: "visitor", agents: [agent.id], ttlSeconds: 600 }, (a) => a.token);
    await twice("outbound webhook secret", "/v1/webhooks", apiKey, { url: "http://127.0.0.1:9/hooks", eventTypes: ["run.*"] }, (a) => a.secret);
    await twice("webhook source secret", "/v1/webhook-sources", apiKey, { name: "crm", scheme: "vigil", tokenMapping: { semanticKey: "CRM_EVENT", entityIdFrom: "body:id" } }, (a) => a.secret);
    await twice("tenant tool secret", "/v1/tools", apiKey, { name: "crm_lookup", description: "Look up", inputSchema: { type: "object" }, url: "https://tools.example.com/crm", riskLevel: "low", capability: "taskRead" }, (a) => a.secret);
    const provisioned = await call("POST", `/v1/agents/${agent.id}/trigger`, apiKey, { action: "provision" });
    expect(provisioned.status, provisioned.text).toBe(201);
    secrets.push(["provisioned trigger URL token", new URL(provisioned.body.url).searchParams.get("token")!]);
    await twice("agent trigger URL token", `/v1/agents/${agent.id}/trigger`, apiKey, { action: "rotate" }, (a) => new URL(a.url).searchParams.get("token")!);

    // Query-string credentials: a widget token on an event stream only; an API key never.
    expect((await raw(`${server.url}/v1/agents/${agent.id}/events?access_token=${encodeURIComponent(apiKey)}`, { signal: AbortSignal.timeout(30_000) })).status).toBe(401);
    expect((await raw(`${server.url}/v1/agents?access_token=${encodeURIComponent(apiKey)}`)).status).toBe(401);
    expect((await raw(`${server.url}/v1/agents/${agent.id}/messages?access_token=${encodeURIComponent(widget.token)}`)).status).toBe(401);
    const stream = await fetch(`${server.url}/v1/agents/${agent.id}/events?after=0&access_token=${encodeURIComponent(widget.token)}`, { headers: { accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    await stream.body?.cancel();

    // Give the agent some history, then gather everything the system kept or shows.
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, apiKey, { text: "hello vault" });
    expect(sent.status).toBe(202);
    await server.client(apiKey).waitForRun(agent.id, sent.body.runKey, { timeoutMs: 60_000 });
    const texts: Array<[string, string]> = [];
    for (const [where, path] of [
      ["operator tables (tenant creation's idempotency record)", "/__debug/tenants/operator/dump"],
      ["tenant tables", `/__debug/tenants/${tenantId}/dump`],
      ["agent tables", `/__debug/tenants/${tenantId}/agents/${agent.id}/dump`],
    ] as const) {
      const dump = await call("GET", path, server.adminToken);
      expect(dump.status, `${where}: ${dump.text.slice(0, 200)}`).toBe(200);
      texts.push([where, dump.text]);
    }
    const tenantTables = JSON.parse(texts[1]![1]).tables as Record<string, Json[]>;
    expect(tenantTables.idempotency?.length, "the replays above went through the idempotency table").toBeGreaterThanOrEqual(2);
    const agentTables = JSON.parse(texts[2]![1]).tables as Record<string, Json[]>;
    const lastSeq = Math.max(...agentTables.events!.map((event) => Number(event.seq)));
    const agentFrames = await collectSse(await fetch(`${server.url}/v1/agents/${agent.id}/events?after=0`, { headers: { authorization: `Bearer ${apiKey}`, accept: "text/event-stream" } }), (seen) => seen.some((frame) => Number(frame.id) >= lastSeq));
    texts.push(["agent events", JSON.stringify(agentFrames)]);
    texts.push(["audit", (await call("GET", "/v1/audit?limit=200", apiKey)).text]);
    for (const path of ["/v1/keys", "/v1/webhooks", "/v1/webhook-sources", "/v1/tools", `/v1/agents/${agent.id}/messages?limit=200`, `/v1/agents/${agent.id}/runs?limit=200`]) texts.push([path, (await call("GET", path, apiKey)).text]);
    texts.push(["wrangler output", server.logs(2_000)]);

    // The search can find things: the dumps name the agent and tenant; the answers above held each secret.
    expect(texts[1]![1]).toContain(agent.id);
    expect(secrets).toHaveLength(8);
    const leaks: string[] = [];
    for (const [what, secret] of secrets) {
      const encodings = [secret, Buffer.from(secret).toString("hex"), Buffer.from(secret).toString("base64"), Buffer.from(secret).toString("base64url"), encodeURIComponent(secret)];
      for (const [where, text] of texts) if (encodings.some((encoding) => text.includes(encoding))) leaks.push(`${what} in ${where}`);
    }
    expect(leaks).toEqual([]);
  }, 180_000);
});
