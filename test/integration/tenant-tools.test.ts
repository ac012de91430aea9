import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tenantStub } from "../../src/objects/shared/stubs";
import { api, createTenant } from "./helpers";

type Json = Record<string, any>;

const inputSchema = { type: "object", properties: { customerId: { type: "string", pattern: "^c_" } }, required: ["customerId"], additionalProperties: false };
const registration = (overrides: Json = {}) => ({
  name: "crm_lookup",
  description: "Look a customer up in the CRM",
  inputSchema,
  url: "https://tools.example.com/crm?v=1",
  riskLevel: "low",
  capability: "taskRead",
  ...overrides,
});

async function hex(bytes: ArrayBuffer): Promise<string> {
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
async function hmacHex(secret: string, data: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data)));
}
let counter = 0;
const newOperationId = async () => hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`http-op-${++counter}-${crypto.randomUUID()}`)));

/** A tenant with one registered tool; `call` runs it through TenantDO.executeTool as an agent would. */
async function setup(overrides: Json = {}) {
  const { tenantId, key } = await createTenant("http-tools");
  const created = await api("POST", "/v1/tools", { key, body: registration(overrides) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const stub = tenantStub(env, tenantId);
  const durable = env.TENANT.get(env.TENANT.idFromName(tenantId));
  const call = async (args: Json, options: { operationId?: string; name?: string } = {}) =>
    (await stub.executeTool({
      operationId: options.operationId ?? (await newOperationId()),
      agentId: "ag_ops",
      runKey: "r".repeat(64),
      toolName: `http:${options.name ?? created.body.name}`,
      args,
      scope: { allowedCategoryIds: [] },
      previewOnly: false,
    })) as Json;
  return { tenantId, key, tool: created.body as Json, stub, durable, call };
}

/** A receiver behind the Worker's outbound fetch: it sees exactly the request bytes that left. */
function receiver(answer: (request: Request, body: string) => Response | Promise<Response>) {
  const seen: Array<{ request: Request; body: string }> = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const body = await request.clone().text();
    seen.push({ request, body });
    return answer(request, body);
  });
  return { seen, spy };
}
const jsonResponse = (value: unknown, init: ResponseInit = {}) => new Response(JSON.stringify(value), { status: 200, headers: { "content-type": "application/json" }, ...init });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("tenant HTTP tools: registry", () => {
  it("registers (secret shown once), lists beside the built-ins, refuses duplicates, deletes", async () => {
    const { key, tool } = await setup();
    expect(tool).toMatchObject({ id: expect.stringMatching(/^tt_/), name: "crm_lookup", method: "POST", riskLevel: "low", capability: "taskRead", url: "https://tools.example.com/crm?v=1" });
    expect(tool.secret).toMatch(/^vts_/);
    const listed = await api("GET", "/v1/tools", { key });
    expect(listed.status).toBe(200);
    const names = listed.body.data.map((entry: Json) => entry.name);
    expect(names).toEqual(expect.arrayContaining(["create_task", "resolve_task_reference", "http:crm_lookup"]));
    expect(listed.body.data.find((entry: Json) => entry.name === "http:crm_lookup")).toMatchObject({
      kind: "http",
      id: tool.id,
      capabilitiesRequired: ["taskRead"],
      sideEffects: { kind: "external_http" },
      inputSchema,
    });
    expect(JSON.stringify(listed.body)).not.toContain(tool.secret);
    expect((await api("POST", "/v1/tools", { key, body: registration() })).status).toBe(409);
    const deleted = await api("DELETE", `/v1/tools/${tool.id}`, { key });
    expect(deleted).toMatchObject({ status: 200, body: { id: tool.id, name: "crm_lookup" } });
    expect(deleted.body.secret).toBeUndefined();
    expect((await api("GET", "/v1/tools", { key })).body.data.some((entry: Json) => entry.name === "http:crm_lookup")).toBe(false);
    expect((await api("DELETE", `/v1/tools/${tool.id}`, { key })).status).toBe(404);
    expect((await api("POST", "/v1/tools", { key, body: registration() })).status).toBe(201);
  });

  it("refuses bad schemas and URLs with 400, and replays an Idempotency-Key with the same secret", async () => {
    const { key } = await createTenant("http-tools-bad");
    const bad = async (overrides: Json) => (await api("POST", "/v1/tools", { key, body: registration(overrides) })).status;
    expect(await bad({ inputSchema: { type: "string" } })).toBe(400);
    expect(await bad({ inputSchema: { type: "object", properties: { a: { $ref: "https://evil.example/s.json" } } } })).toBe(400);
    expect(await bad({ url: "http://tools.example.com/crm" })).toBe(400);
    expect(await bad({ url: "https://user:pw@tools.example.com/" })).toBe(400);
    expect(await bad({ name: "Bad Name" })).toBe(400);
    expect(await bad({ method: "GET" })).toBe(400);
    expect(await bad({ capability: "root" })).toBe(400);
    const headers = { "idempotency-key": "reg-1" };
    const first = await api("POST", "/v1/tools", { key, body: registration(), headers });
    const again = await api("POST", "/v1/tools", { key, body: registration(), headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await api("POST", "/v1/tools", { key, body: registration({ description: "other" }), headers })).status).toBe(409);
    const reader = await api("POST", "/v1/keys", { key, body: { scopes: ["agents:read"] } });
    expect((await api("POST", "/v1/tools", { key: reader.body.key, body: registration({ name: "x" }) })).status).toBe(403);
    expect((await api("GET", "/v1/tools", { key: reader.body.key })).status).toBe(200);
  });
});

describe("tenant HTTP tools: calls", () => {
  it("sends one signed request to the tool's host and records it: a replay does not call again", async () => {
    const { call, tool } = await setup();
    const { seen } = receiver(() => jsonResponse({ customer: { id: "c_42", tier: "gold" } }));
    const operationId = await newOperationId();
    const first = await call({ customerId: "c_42" }, { operationId });
    expect(first).toMatchObject({ ok: true, toolName: "http:crm_lookup", operationId, output: { customer: { id: "c_42", tier: "gold" } } });
    expect(first.links).toEqual([{ relation: "tool_effect", target: { type: "external_http", id: tool.id }, effect: "updated" }]);
    expect(seen).toHaveLength(1);
    const { request, body } = seen[0]!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe("https://tools.example.com/crm?v=1");
    expect(request.redirect).toBe("manual");
    expect(body).toBe(JSON.stringify({ customerId: "c_42" }));
    expect(request.headers.get("vigil-operation-id")).toBe(operationId);
    const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(request.headers.get("vigil-signature") ?? "");
    expect(signature).not.toBeNull();
    expect(Math.abs(Number(signature![1]) - Date.now() / 1000)).toBeLessThan(60);
    expect(signature![2]).toBe(await hmacHex(tool.secret, `${signature![1]}.${body}`));

    expect(await call({ customerId: "c_42" }, { operationId })).toEqual(first);
    expect(seen).toHaveLength(1);
  });

  it("refuses invalid arguments, unknown tools and previews without sending anything", async () => {
    const { call, stub } = await setup();
    const { seen } = receiver(() => jsonResponse({}));
    const invalid = await call({ customerId: 42, extra: true });
    expect(invalid).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect((await call({ customerId: "c_1" }, { name: "nope" })).code).toBe("unknown_tool");
    const preview = await stub.executeTool({ operationId: await newOperationId(), agentId: "a", runKey: "r", toolName: "http:crm_lookup", args: { customerId: "c_1" }, scope: { allowedCategoryIds: [] }, previewOnly: true });
    expect(preview).toMatchObject({ ok: false, code: "preview_not_supported" });
    expect(seen).toHaveLength(0);
  });

  it("denies egress the tool's registration does not allow, with no request sent", async () => {
    const { call, durable, tool } = await setup();
    const { seen } = receiver(() => jsonResponse({}));
    // A stored URL that today's egress rule refuses (plain http to a public host) is never called.
    await runInDurableObject(durable, (_instance, state) => state.storage.sql.exec("UPDATE tenant_tools SET url = ? WHERE id = ?", "http://tools.example.com/crm", tool.id));
    const denied = await call({ customerId: "c_1" });
    expect(denied).toMatchObject({ ok: false, code: "network_denied", retryable: false, details: { requestSent: false } });
    expect(seen).toHaveLength(0);
  });

  it("does not follow a redirect to another host: network_denied after the one request", async () => {
    const { call } = await setup();
    const { seen } = receiver(() => new Response(null, { status: 302, headers: { location: "https://evil.example.net/steal" } }));
    const result = await call({ customerId: "c_1" });
    expect(result).toMatchObject({ ok: false, code: "network_denied" });
    expect(result.message).toContain("evil.example.net");
    expect(seen.map((entry) => new URL(entry.request.url).host)).toEqual(["tools.example.com"]);
  });

  it("caps the answer: too large, not JSON, or an error status", async () => {
    const { call } = await setup();
    receiver(() => new Response(new ReadableStream({ start(controller) { for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(8_192).fill(32)); controller.close(); } }), { headers: { "content-type": "application/json" } }));
    expect(await call({ customerId: "c_1" })).toMatchObject({ ok: false, code: "response_too_large", retryable: false });
    vi.restoreAllMocks();
    receiver(() => new Response("<html>", { headers: { "content-type": "text/html" } }));
    expect(await call({ customerId: "c_1" })).toMatchObject({ ok: false, code: "invalid_response" });
    vi.restoreAllMocks();
    const { seen } = receiver(() => jsonResponse({ error: "down" }, { status: 503 }));
    const operationId = await newOperationId();
    expect(await call({ customerId: "c_1" }, { operationId })).toMatchObject({ ok: false, code: "upstream_error", retryable: true, details: { status: 503 } });
    // Retryable outcomes are not recorded: the retry calls again, with the same Vigil-Operation-Id.
    await call({ customerId: "c_1" }, { operationId });
    expect(seen.map((entry) => entry.request.headers.get("vigil-operation-id"))).toEqual([operationId, operationId]);
  });

  it("bounds a slow tool by the timeout (retryable)", { timeout: 20_000 }, async () => {
    const { call } = await setup();
    receiver(
      (request) =>
        new Promise<Response>((_resolve, reject) => {
          request.signal.addEventListener("abort", () => reject(request.signal.reason));
        }),
    );
    const started = Date.now();
    const result = await call({ customerId: "c_1" });
    expect(result).toMatchObject({ ok: false, code: "timeout", retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
  });
});

describe("tenant HTTP tools: input schema patterns cannot stall anyone", () => {
  it("an exponential pattern against a long argument is refused in linear time while another tenant is served; RE2-incompatible patterns are refused at registration", async () => {
    const { call, key } = await setup({ name: "hostile", inputSchema: { type: "object", properties: { customerId: { type: "string", pattern: "^(a|aa)*$" } }, required: ["customerId"] } });
    const { seen } = receiver(() => jsonResponse({}));
    const bystander = await createTenant("bystander");
    const [refused, health, other] = await Promise.all([
      call({ customerId: "a".repeat(20_000) + "!" }),
      api("GET", "/healthz"),
      api("GET", "/v1/tools", { key: bystander.key }),
    ]);
    expect(refused).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(JSON.stringify(refused)).toContain("does not match pattern");
    expect([health.status, other.status]).toEqual([200, 200]);
    expect(seen).toHaveLength(0);
    for (const pattern of ["foo(?=bar)", "(a)\\1"]) {
      const res = await api("POST", "/v1/tools", { key, body: registration({ name: "lookahead", inputSchema: { type: "object", properties: { s: { type: "string", pattern } } } }) });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain("linear-time RE2 engine");
    }
    const props = await api("POST", "/v1/tools", { key, body: registration({ name: "by_pattern", inputSchema: { type: "object", patternProperties: { "^x": { type: "string" } } } }) });
    expect(props.status).toBe(400);
    expect(JSON.stringify(props.body)).toContain("patternProperties");
  });
});
