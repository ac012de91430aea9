import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { env } from "cloudflare:test";
import { tenantStub } from "../../src/objects/shared/stubs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

afterEach(() => vi.restoreAllMocks());

/**
 * The official SDK's web-standard MCP handler answering the Worker's outbound requests in this
 * isolate (the runtime's fetch is the transport under the egress door). The real socket server on
 * 127.0.0.1 is exercised by test/e2e/mcp-client.seams.test.ts; here the routes and their rules are.
 */
function serveMcp(host: string) {
  const seen: Array<{ url: string; authorization: string | null; body: string }> = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "in-isolate", version: "1.0.0" });
    server.registerTool("lookup", { description: "Look a word up", inputSchema: z.object({ word: z.string() }), annotations: { readOnlyHint: true } }, async ({ word }) => ({ content: [{ type: "text", text: word }] }));
    return server;
  });
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    seen.push({ url: request.url, authorization: request.headers.get("authorization"), body: await request.clone().text() });
    if (new URL(request.url).host !== host) return new Response("not here", { status: 404 });
    return handler.fetch(request);
  });
  return seen;
}

const register = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => api("POST", "/v1/mcp-servers", { key, body: { name: "words", url: "http://127.0.0.1:8931/mcp", capability: "taskRead", ...body }, headers });

describe("/v1/mcp-servers", () => {
  it("registers a server, lists its tools through the official SDK, audits it, and offers the tools in GET /v1/tools", async () => {
    const seen = serveMcp("127.0.0.1:8931");
    const { tenantId, key } = await createTenant();
    const created = await register(key, { riskLevel: "low" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: "words", url: "http://127.0.0.1:8931/mcp", auth: "none", riskLevel: "low", capability: "taskRead", toolFilter: null, toolsVersion: 1, lastError: null });
    expect(created.body.tools).toEqual([{ name: "mcp_words_lookup", remoteName: "lookup", description: "Look a word up", mutating: false }]);
    expect(seen.map((request) => JSON.parse(request.body || "{}").method).filter(Boolean)).toEqual(expect.arrayContaining(["initialize", "tools/list"]));
    expect(seen.every((request) => request.authorization === null)).toBe(true);
    const listed = await api("GET", "/v1/mcp-servers", { key });
    expect(listed.body).toEqual({ data: [created.body], nextCursor: null });
    const tools = (await api("GET", "/v1/tools", { key })).body.data as any[];
    expect(tools.find((tool) => tool.name === "mcp_words_lookup")).toMatchObject({ kind: "mcp", id: created.body.id, sideEffects: { kind: "none" }, inputSchema: { type: "object", properties: { word: { type: "string" } } } });
    const audit = (await api("GET", "/v1/audit", { key })).body.data as any[];
    expect(audit).toContainEqual(expect.objectContaining({ action: "mcp_server.registered", target: created.body.id, detail: expect.objectContaining({ name: "words", host: "127.0.0.1:8931" }) }));
    expect(audit).toContainEqual(expect.objectContaining({ action: "egress.mcp", detail: expect.objectContaining({ purpose: "mcp", host: "127.0.0.1:8931", outcome: "sent" }) }));
    // The server's host joins this tenant's egress allowlist, and no other tenant's.
    expect(await tenantStub(env, tenantId).egressHosts()).toContain("127.0.0.1:8931");
    expect(await tenantStub(env, (await createTenant("other")).tenantId).egressHosts()).not.toContain("127.0.0.1:8931");
  });

  it("sends the stored secret as a bearer token, and refuses a secret stored for another provider", async () => {
    const seen = serveMcp("127.0.0.1:8931");
    const { key } = await createTenant();
    const secret = await api("POST", "/v1/providers/secrets", { key, body: { provider: "mcp-words", apiKey: "mcp-token-123" } });
    expect(secret.status).toBe(201);
    const wrong = await api("POST", "/v1/providers/secrets", { key, body: { provider: "openai", apiKey: "sk-x" } });
    const refused = await register(key, { auth: { secretRefId: wrong.body.id } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("validation_failed");
    expect(refused.body.detail ?? refused.body.message).toMatch(/mcp-words/);
    const created = await register(key, { auth: { secretRefId: secret.body.id } });
    expect(created.status).toBe(201);
    expect(created.body.auth).toEqual({ secretRefId: secret.body.id });
    expect(seen.filter((request) => request.body.includes('"tools/list"')).map((request) => request.authorization)).toEqual(["Bearer mcp-token-123"]);
    expect(JSON.stringify(created.body)).not.toContain("mcp-token-123");
  });

  it("validates the body with problem+json codes and never answers 500", async () => {
    serveMcp("127.0.0.1:8931");
    const { key } = await createTenant();
    for (const body of [
      { name: "has_underscore" },
      { name: "UPPER" },
      { url: "ftp://127.0.0.1/mcp" },
      { url: "http://mcp.example.com/mcp" },
      { url: "http://user:pw@127.0.0.1:8931/mcp" },
      { capability: "root" },
      { riskLevel: "extreme" },
      { auth: "basic" },
      { auth: { secretRefId: "ps_missing" } },
      { toolFilter: [] },
      { surprise: true },
    ]) {
      const res = await register(key, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.code).toBe("validation_failed");
    }
    expect((await api("POST", "/v1/mcp-servers", { key, body: "{not json" })).status).toBe(400);
  });

  it("a name is unique among live servers, an unreachable server is kept with lastError, and delete frees the name", async () => {
    serveMcp("127.0.0.1:8931");
    const { key } = await createTenant();
    const down = await register(key, { url: "http://127.0.0.1:8999/mcp" });
    expect(down.status).toBe(201);
    expect(down.body.tools).toEqual([]);
    expect(down.body.lastError).toBeTruthy();
    expect((await register(key, {})).status).toBe(409);
    const deleted = await api("DELETE", `/v1/mcp-servers/${down.body.id}`, { key });
    expect(deleted.status).toBe(200);
    expect((await api("DELETE", `/v1/mcp-servers/${down.body.id}`, { key })).status).toBe(404);
    expect((await register(key, {})).status).toBe(201);
    const audit = (await api("GET", "/v1/audit", { key })).body.data as any[];
    expect(audit).toContainEqual(expect.objectContaining({ action: "mcp_server.deleted", target: down.body.id }));
  });

  it("Idempotency-Key replays the first answer; another body under the key is a 409", async () => {
    serveMcp("127.0.0.1:8931");
    const { key } = await createTenant();
    const first = await register(key, {}, { "idempotency-key": "mcp-once" });
    const again = await register(key, {}, { "idempotency-key": "mcp-once" });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await api("GET", "/v1/mcp-servers", { key })).body.data).toHaveLength(1);
    expect((await register(key, { name: "other" }, { "idempotency-key": "mcp-once" })).status).toBe(409);
  });

  it("another tenant's server is invisible: list is empty and delete is 404", async () => {
    serveMcp("127.0.0.1:8931");
    const a = await createTenant("a");
    const b = await createTenant("b");
    const created = await register(a.key, {});
    expect((await api("GET", "/v1/mcp-servers", { key: b.key })).body.data).toEqual([]);
    expect((await api("DELETE", `/v1/mcp-servers/${created.body.id}`, { key: b.key })).status).toBe(404);
    expect(((await api("GET", "/v1/tools", { key: b.key })).body.data as any[]).some((tool) => tool.kind === "mcp")).toBe(false);
  });

  it("MCP tools pass the tenant-tool gates: capability and the per-tool daily quota refuse a call before anything is sent", async () => {
    const seen = serveMcp("127.0.0.1:8931");
    const { key } = await createTenant();
    expect((await register(key, { riskLevel: "low", capability: "taskRead" })).status).toBe(201);
    expect((await api("PUT", "/v1/policy", { key, body: { toolQuotas: { mcp_words_lookup: 1 } } })).status).toBe(200);
    const calls = () => seen.filter((request) => request.body.includes('"tools/call"')).map((request) => JSON.parse(request.body).params);
    const playbook = { model: "builtin:playbook", playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "ok" }] } };
    const results = async (agentId: string) => ((await api("GET", `/v1/agents/${agentId}/messages`, { key })).body.data as any[]).filter((m) => m.kind === "toolResult").reverse().map((m) => m.content);

    const allowed = await createAgent(key, playbook);
    const sent = await api("POST", `/v1/agents/${allowed.id}/messages`, { key, body: { text: '/tool mcp_words_lookup {"word":"one"}\n/tool mcp_words_lookup {"word":"two"}' } });
    expect((await waitForRun(key, allowed.id, sent.body.runKey)).status).toBe("completed");
    expect((await results(allowed.id)).map((r) => [r.ok, r.code])).toEqual([
      [true, undefined],
      [false, "tool_quota_exceeded"],
    ]);
    expect(calls()).toEqual([{ name: "lookup", arguments: { word: "one" } }]);

    const denied = await createAgent(key, { ...playbook, capabilities: { revoke: ["taskRead"] } });
    const refused = await api("POST", `/v1/agents/${denied.id}/messages`, { key, body: { text: '/tool mcp_words_lookup {"word":"three"}' } });
    await waitForRun(key, denied.id, refused.body.runKey);
    expect((await results(denied.id))[0]).toMatchObject({ ok: false, toolName: "mcp_words_lookup", code: "capability_denied" });
    expect(calls()).toHaveLength(1);
  });
});
