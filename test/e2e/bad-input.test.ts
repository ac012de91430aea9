import { beforeAll, describe, expect, it } from "vitest";
import { raw, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;
let apiKey: string;
let agentId: string;

beforeAll(async () => {
  server = sharedServer();
  const tenant = await server.tenant("bad-input");
  apiKey = tenant.apiKey;
  agentId = (await tenant.client.createAgent({ kind: "coach", displayName: "Target" })).id;
  const { runKey } = await tenant.client.sendMessage(agentId, { text: "seed" });
  await tenant.client.waitForRun(agentId, runKey);
});

interface Case {
  name: string;
  method?: string;
  /** `{agent}` is replaced by a real agent id of the tenant. */
  path: string;
  body?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  /** Default: the tenant's API key. `null` sends no Authorization. */
  auth?: string | null;
  status: number;
  code: string;
  /** A validation error must name this field. */
  field?: string;
}

const JSON_TYPE = { "content-type": "application/json" };
const agentBody = (extra: Record<string, unknown>) => JSON.stringify({ kind: "coach", displayName: "Coach", ...extra });

const cases: Case[] = [
  // Malformed bodies and content types.
  { name: "malformed JSON", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: "{kind: coach", status: 400, code: "invalid_json" },
  { name: "truncated JSON", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: '{"text": "hi"', status: 400, code: "invalid_json" },
  { name: "empty body", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: "", status: 400, code: "invalid_json" },
  { name: "invalid UTF-8", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: new Uint8Array([0xff, 0xfe, 0x7b]), status: 400, code: "invalid_json" },
  { name: "JSON array instead of object", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: "[]", status: 400, code: "validation_failed", field: "(root)" },
  { name: "JSON null", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: "null", status: 400, code: "validation_failed" },
  { name: "deeply nested array", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: `${"[".repeat(5000)}${"]".repeat(5000)}`, status: 400, code: "validation_failed" },
  { name: "text/plain body", method: "POST", path: "/v1/agents", headers: { "content-type": "text/plain" }, body: agentBody({}), status: 415, code: "unsupported_media_type" },
  { name: "no content type", method: "POST", path: "/v1/agents/{agent}/messages", body: '{"text":"hi"}', status: 415, code: "unsupported_media_type" },
  { name: "form-encoded body", method: "POST", path: "/v1/tokens", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "sub=u", status: 415, code: "unsupported_media_type" },
  { name: "PATCH as text/plain", method: "PATCH", path: "/v1/agents/{agent}", headers: { "content-type": "text/plain" }, body: '{"displayName":"x"}', status: 415, code: "unsupported_media_type" },
  // Unknown and wrong fields.
  { name: "unknown field on create agent", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: agentBody({ tenantId: "t0000000000000000" }), status: 400, code: "validation_failed", field: "(root)" },
  { name: "__proto__ field", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: '{"__proto__":{"admin":true},"kind":"coach","displayName":"C"}', status: 400, code: "validation_failed" },
  { name: "unknown field on message", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: '{"text":"hi","authority":"runtime_instruction"}', status: 400, code: "validation_failed" },
  { name: "PATCH of lifecycle (not patchable)", method: "PATCH", path: "/v1/agents/{agent}", headers: JSON_TYPE, body: '{"lifecycle":"destroyed"}', status: 400, code: "validation_failed" },
  { name: "PATCH with nothing to change", method: "PATCH", path: "/v1/agents/{agent}", headers: JSON_TYPE, body: '{"version":1}', status: 400, code: "validation_failed" },
  { name: "wrong type of text", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: '{"text":42}', status: 400, code: "validation_failed", field: "text" },
  { name: "empty text", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: '{"text":""}', status: 400, code: "validation_failed", field: "text" },
  { name: "oversized text", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: JSON.stringify({ text: "a".repeat(200_000) }), status: 400, code: "validation_failed", field: "text" },
  { name: "bad session id", method: "POST", path: "/v1/agents/{agent}/messages", headers: JSON_TYPE, body: '{"text":"hi","sessionId":"../other"}', status: 400, code: "validation_failed", field: "sessionId" },
  { name: "unavailable model", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: agentBody({ model: "builtin:gpt-4o" }), status: 400, code: "validation_failed", field: "model" },
  { name: "negative chunk delay", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: agentBody({ modelOptions: { chunkDelayMs: -1 } }), status: 400, code: "validation_failed", field: "modelOptions.chunkDelayMs" },
  { name: "invalid playbook regex", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: agentBody({ model: "builtin:playbook", playbook: { rules: [{ when: { textPattern: "(" }, reply: "x" }] } }), status: 400, code: "validation_failed", field: "playbook.rules.0.when.textPattern" },
  { name: "kind with spaces", method: "POST", path: "/v1/agents", headers: JSON_TYPE, body: agentBody({ kind: "Gym Coach" }), status: 400, code: "validation_failed", field: "kind" },
  { name: "unknown scope on key", method: "POST", path: "/v1/keys", headers: JSON_TYPE, body: '{"scopes":["root"]}', status: 400, code: "validation_failed", field: "scopes.0" },
  { name: "token TTL over an hour", method: "POST", path: "/v1/tokens", headers: JSON_TYPE, body: '{"sub":"u","agents":["{agent}"],"ttlSeconds":86400}', status: 400, code: "validation_failed", field: "ttlSeconds" },
  { name: "token for an unknown agent", method: "POST", path: "/v1/tokens", headers: JSON_TYPE, body: '{"sub":"u","agents":["ag_nobody"]}', status: 404, code: "not_found" },
  { name: "tenant with a bad time zone", method: "POST", path: "/v1/tenants", auth: "operator", headers: JSON_TYPE, body: '{"name":"x","timeZone":"Mars/Olympus"}', status: 400, code: "validation_failed", field: "timeZone" },
  { name: "tenant with malformed JSON", method: "POST", path: "/v1/tenants", auth: "operator", headers: JSON_TYPE, body: "{", status: 400, code: "invalid_json" },
  // Bad ids.
  { name: "agent id with a space", path: "/v1/agents/bad%20id", status: 400, code: "validation_failed", field: "id" },
  { name: "agent id with encoded slashes", path: "/v1/agents/..%2F..%2Fetc", status: 400, code: "validation_failed", field: "id" },
  { name: "agent id too long", path: `/v1/agents/${"a".repeat(65)}`, status: 400, code: "validation_failed", field: "id" },
  { name: "agent id with a colon (DO name separator)", path: "/v1/agents/t0000000000000000:ag_x/messages", status: 400, code: "validation_failed", field: "id" },
  { name: "malformed runKey", path: "/v1/agents/{agent}/runs/not-a-run-key", status: 400, code: "validation_failed", field: "runKey" },
  { name: "unknown runKey", path: `/v1/agents/{agent}/runs/${"0".repeat(64)}`, status: 404, code: "not_found" },
  { name: "bad key id on revoke", method: "DELETE", path: "/v1/keys/key%20x", status: 400, code: "validation_failed", field: "id" },
  { name: "unknown key id on revoke", method: "DELETE", path: "/v1/keys/key_unknown", status: 404, code: "not_found" },
  // Bad cursors and limits.
  { name: "garbage agents cursor", path: "/v1/agents?cursor=%%%", status: 400, code: "validation_failed" },
  { name: "agents cursor of the wrong shape", path: `/v1/agents?cursor=${Buffer.from('{"x":1}').toString("base64url")}`, status: 400, code: "validation_failed" },
  { name: "messages cursor of the wrong shape", path: `/v1/agents/{agent}/messages?cursor=${Buffer.from('{"s":"one"}').toString("base64url")}`, status: 400, code: "validation_failed" },
  { name: "garbage runs cursor", path: "/v1/agents/{agent}/runs?cursor=zzz", status: 400, code: "validation_failed" },
  { name: "cursor too long", path: `/v1/agents?cursor=${"a".repeat(600)}`, status: 400, code: "validation_failed", field: "cursor" },
  { name: "limit zero", path: "/v1/agents?limit=0", status: 400, code: "validation_failed", field: "limit" },
  { name: "limit too large", path: "/v1/agents/{agent}/messages?limit=100000", status: 400, code: "validation_failed", field: "limit" },
  { name: "limit not a number", path: "/v1/agents/{agent}/runs?limit=ten", status: 400, code: "validation_failed", field: "limit" },
  { name: "fractional limit", path: "/v1/agents?limit=2.5", status: 400, code: "validation_failed", field: "limit" },
  { name: "unknown include", path: "/v1/agents?include=everything", status: 400, code: "validation_failed", field: "include" },
  // Bad resume points of the event stream.
  { name: "Last-Event-ID not a number", path: "/v1/agents/{agent}/events", headers: { "last-event-id": "abc" }, status: 400, code: "validation_failed" },
  { name: "Last-Event-ID negative", path: "/v1/agents/{agent}/events", headers: { "last-event-id": "-1" }, status: 400, code: "validation_failed" },
  { name: "Last-Event-ID fractional", path: "/v1/agents/{agent}/events", headers: { "last-event-id": "1.5" }, status: 400, code: "validation_failed" },
  { name: "Last-Event-ID beyond 2^53", path: "/v1/agents/{agent}/events", headers: { "last-event-id": "99999999999999999999" }, status: 400, code: "validation_failed" },
  { name: "?after= not a number", path: "/v1/agents/{agent}/events?after=yesterday", status: 400, code: "validation_failed" },
  { name: "?after= empty", path: "/v1/agents/{agent}/events?after=", status: 400, code: "validation_failed" },
  { name: "?after= given twice", path: "/v1/agents/{agent}/events?after=1&after=2", status: 400, code: "validation_failed" },
  // Headers and credentials.
  { name: "Idempotency-Key with spaces", method: "POST", path: "/v1/agents", headers: { ...JSON_TYPE, "idempotency-key": "not ok" }, body: agentBody({}), status: 400, code: "validation_failed" },
  { name: "Idempotency-Key too long", method: "POST", path: "/v1/agents/{agent}/messages", headers: { ...JSON_TYPE, "idempotency-key": "k".repeat(129) }, body: '{"text":"hi"}', status: 400, code: "validation_failed" },
  { name: "no credentials", path: "/v1/agents", auth: null, status: 401, code: "unauthorized" },
  { name: "Basic auth", path: "/v1/agents", auth: null, headers: { authorization: "Basic dXNlcjpwYXNz" }, status: 401, code: "unauthorized" },
  { name: "well-formed key of an unknown tenant", path: "/v1/agents", auth: `vk_t0123456789abcdefg_${"a".repeat(43)}`, status: 401, code: "unauthorized" },
  { name: "JWT-shaped garbage", path: "/v1/agents", auth: "eyJhbGciOiJIUzI1NiJ9.eyJ0aWQiOjF9.sig", status: 401, code: "unauthorized" },
  { name: "garbage access_token on an event stream", path: "/v1/agents/{agent}/events?access_token=a.b.c", auth: null, status: 401, code: "unauthorized" },
  // Unknown routes and methods.
  { name: "unknown route", path: "/v1/nothing-here", status: 404, code: "not_found" },
  { name: "unknown route without auth (no route discovery)", path: "/nothing-here", auth: null, status: 401, code: "unauthorized" },
  { name: "PUT on a collection", method: "PUT", path: "/v1/agents", headers: JSON_TYPE, body: "{}", status: 404, code: "not_found" },
];

describe("bad input answers 4xx problem+json with a stable code, never 500", () => {
  for (const testCase of cases) {
    it(`${testCase.name} → ${testCase.status} ${testCase.code}`, async () => {
      const headers: Record<string, string> = { ...testCase.headers };
      const credential = testCase.auth === undefined ? apiKey : testCase.auth === "operator" ? server.adminToken : testCase.auth;
      if (credential) headers.authorization = `Bearer ${credential}`;
      const path = testCase.path.replaceAll("{agent}", agentId);
      const init: RequestInit = { method: testCase.method ?? "GET", headers, signal: AbortSignal.timeout(30_000) };
      if (testCase.body !== undefined) init.body = typeof testCase.body === "string" ? testCase.body.replaceAll("{agent}", agentId) : testCase.body;
      const response = await raw<any>(`${server.url}${path}`, init);
      expect(response.status, response.text.slice(0, 300)).toBe(testCase.status);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(response.body).toMatchObject({ status: testCase.status, code: testCase.code, type: expect.stringContaining(testCase.code), title: expect.any(String), detail: expect.any(String) });
      if (testCase.field) expect(response.body.errors?.map((e: { path: string }) => e.path)).toContain(testCase.field);
    });
  }

  it("none of the above changed the agent or the tenant", async () => {
    const client = server.client(apiKey);
    const agents = await client.listAgents();
    expect(agents.data.map((agent) => [agent.id, agent.version, agent.lifecycle])).toEqual([[agentId, 1, "active"]]);
    expect((await client.listRuns(agentId)).data).toHaveLength(1);
    expect((await client.listKeys()).data).toHaveLength(1);
  });
});
