import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, parseSse } from "./helpers";

const ORIGIN = "https://shop.example";

describe("CORS on /v1/*", () => {
  it("answers a preflight without credentials, allowing the headers the API and widget send", async () => {
    const response = await SELF.fetch("https://vigil.test/v1/agents/ag_x/messages", {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, idempotency-key" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    const allowed = response.headers.get("access-control-allow-headers")!.toLowerCase();
    for (const header of ["authorization", "content-type", "idempotency-key", "last-event-id", "mcp-protocol-version"]) expect(allowed).toContain(header);
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("marks answers, errors included, as readable from any origin and exposes Retry-After and the run/event headers", async () => {
    const { key } = await createTenant("cors");
    const ok = await SELF.fetch("https://vigil.test/v1/agents", { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = ok.headers.get("access-control-expose-headers")!.toLowerCase();
    for (const header of ["retry-after", "x-vigil-run-key", "x-vigil-event-seq"]) expect(exposed).toContain(header);

    const unauthorized = await SELF.fetch("https://vigil.test/v1/agents", { headers: { origin: ORIGIN } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe("*");
    const missing = await SELF.fetch("https://vigil.test/v1/nothing-here", { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("marks a streaming turn's answer readable too, its frames intact", async () => {
    const { key } = await createTenant("cors-stream");
    const agent = await createAgent(key);
    const res = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: "hello" }, headers: { origin: ORIGIN, accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")!.toLowerCase()).toContain("x-vigil-run-key");
    expect(res.headers.get("x-vigil-run-key")).toBeTruthy();
    expect(parseSse(res.body).map((frame) => frame.event)).toContain("run.completed");
  });

  it("leaves non-API paths alone", async () => {
    const health = await SELF.fetch("https://vigil.test/healthz", { headers: { origin: ORIGIN } });
    expect(health.headers.get("access-control-allow-origin")).toBeNull();
  });
});
