import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant } from "./helpers";

describe("rate limits", () => {
  it("limits one agent to 20 turns a minute with Retry-After", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    for (let i = 0; i < 20; i++) expect((await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: `t${i}` } })).status).toBe(202);
    const limited = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "one too many" } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const other = await createAgent(key);
    expect((await api("POST", `/v1/agents/${other.id}/messages`, { key, body: { text: "fine" } })).status).toBe(202);
  });

  it("limits one API key to 100 requests a minute with Retry-After", async () => {
    const { key } = await createTenant();
    const second = (await api("POST", "/v1/keys", { key, body: {} })).body.key;
    let limited;
    let sent = 0;
    // The Rate Limiting binding counts fixed 60 s periods aligned to the clock: a burst that straddles one edge
    // needs up to 2 × 100 + 1 requests before one is refused (as in auth-cache.test.ts).
    while (!limited && sent <= 200) {
      const res = await api("GET", "/v1/agents", { key });
      sent += 1;
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(sent).toBeGreaterThan(99);
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await api("GET", "/v1/agents", { key: second })).status).toBe(200);
  });
});

describe("bad input gets a clear 4xx and loses nothing", () => {
  it("answers malformed JSON, wrong content type, unknown fields and bad ids with problem+json", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const cases: Array<[string, string, { body?: unknown; headers?: Record<string, string> }, number, string]> = [
      ["POST", "/v1/agents", { body: "{not json", headers: { "content-type": "application/json" } }, 400, "invalid_json"],
      ["POST", "/v1/agents", { body: "kind=x", headers: { "content-type": "text/plain" } }, 415, "unsupported_media_type"],
      ["POST", "/v1/agents", { body: { kind: "coach", displayName: "C", surprise: true } }, 400, "validation_failed"],
      ["POST", "/v1/agents", { body: { kind: "coach", displayName: "C", model: "builtin:gpt-4o" } }, 400, "validation_failed"],
      ["POST", "/v1/agents", { body: { kind: "coach", displayName: "C", playbook: { rules: [{ when: { textPattern: "(" }, reply: "x" }] } } }, 400, "validation_failed"],
      ["POST", "/v1/agents", { body: { kind: "coach", displayName: "C", playbook: { rules: [{ when: { textPattern: "(a)\\1" }, reply: "x" }] } } }, 400, "validation_failed"],
      ["POST", `/v1/agents/${agent.id}/messages`, { body: { text: "" } }, 400, "validation_failed"],
      ["POST", `/v1/agents/${agent.id}/messages`, { body: [] }, 400, "validation_failed"],
      ["PATCH", `/v1/agents/${agent.id}`, { body: {} }, 400, "validation_failed"],
      ["GET", "/v1/agents/bad%20id", {}, 400, "validation_failed"],
      ["GET", `/v1/agents/${agent.id}/messages?cursor=%%%`, {}, 400, "validation_failed"],
      ["GET", `/v1/agents/${agent.id}/messages?limit=100000`, {}, 400, "validation_failed"],
      ["GET", "/v1/nowhere", {}, 404, "not_found"],
    ];
    for (const [method, path, options, status, code] of cases) {
      const res = await api(method, path, { key, ...options });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get("content-type"), `${method} ${path}`).toBe("application/problem+json");
      expect(res.body.code, `${method} ${path}`).toBe(code);
    }
    const invalid = await api("POST", "/v1/agents", { key, body: { kind: "Bad Kind" } });
    expect(invalid.body.errors.map((e: any) => e.path).sort()).toEqual(["displayName", "kind"]);
    expect((await api("GET", "/v1/agents", { key })).body.data).toHaveLength(1);
  });
});
