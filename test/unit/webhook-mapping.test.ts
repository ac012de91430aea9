import { describe, expect, it } from "vitest";
import { mapDeliveryTokens, parseInboundBody, resolveRef, sourceDeliveryId, tokenMappingSchema } from "../../src/core/wakes/webhook-mapping";

const encode = (text: string) => new TextEncoder().encode(text);

const GITHUB = tokenMappingSchema.parse({
  semanticKey: "GITHUB_PUSH",
  subtypeTokens: [
    { namespace: "github.event", from: "header:x-github-event" },
    { namespace: "github.ref", from: "body:ref" },
  ],
  entityIdFrom: ["body:repository.full_name", "body:commits.0.id", "body:missing.path"],
});

describe("token mapping language", () => {
  it("emits the semantic key, the resolved subtypes and entity ids", () => {
    const view = {
      headers: new Headers({ "X-GitHub-Event": "push" }),
      body: { ref: "refs/heads/main", repository: { full_name: "octo/repo" }, commits: [{ id: "abc123" }] },
    };
    expect(mapDeliveryTokens(GITHUB, view)).toEqual([
      { tokenClass: "semanticKey", tokenValue: "GITHUB_PUSH" },
      { tokenClass: "subtypeToken", tokenNamespace: "github.event", tokenValue: "push" },
      { tokenClass: "subtypeToken", tokenNamespace: "github.ref", tokenValue: "refs/heads/main" },
      { tokenClass: "entityId", tokenValue: "octo/repo" },
      { tokenClass: "entityId", tokenValue: "abc123" },
    ]);
  });

  it("skips values that are missing, empty, non-scalar or too long; renders numbers and booleans", () => {
    const headers = new Headers({ "x-empty": "  " });
    const body = { n: 42, b: false, o: { a: 1 }, arr: [1], long: "x".repeat(513), proto: {} };
    expect(resolveRef("body:n", { headers, body })).toBe("42");
    expect(resolveRef("body:b", { headers, body })).toBe("false");
    expect(resolveRef("body:o", { headers, body })).toBeNull();
    expect(resolveRef("body:arr", { headers, body })).toBeNull();
    expect(resolveRef("body:long", { headers, body })).toBeNull();
    expect(resolveRef("body:proto.constructor", { headers, body })).toBeNull();
    expect(resolveRef("header:x-empty", { headers, body })).toBeNull();
    expect(resolveRef("header:x-absent", { headers, body })).toBeNull();
    expect(resolveRef("body:n", { headers, body: undefined })).toBeNull();
    expect(resolveRef("body:0", { headers, body: ["first"] })).toBe("first");
  });

  it("validates mappings and names the failing field", () => {
    const bad = (mapping: unknown) => {
      const parsed = tokenMappingSchema.safeParse(mapping);
      return parsed.success ? "" : parsed.error.issues.map((issue) => issue.message).join("; ");
    };
    expect(bad({})).toMatch(/semanticKey is required/);
    expect(bad({ semanticKey: "1BAD" })).toMatch(/semanticKey must be/);
    expect(bad({ semanticKey: "OK", subtypeTokens: [{ namespace: "a|b", from: "header:x" }] })).toMatch(/namespace/);
    expect(bad({ semanticKey: "OK", subtypeTokens: [{ namespace: "ns", from: "query:x" }] })).toMatch(/subtypeTokens\[\]\.from must be header:<name> or body:<dot\.path>/);
    expect(bad({ semanticKey: "OK", entityIdFrom: "body:a.b.c.d.e.f.g.h.i" })).toMatch(/entityIdFrom must be/);
    expect(bad({ semanticKey: "OK", entityIdFrom: [] })).toMatch(/entityIdFrom/);
    expect(bad({ semanticKey: "OK", extra: 1 })).toMatch(/allows only/);
    expect(bad({ semanticKey: "OK", subtypeTokens: Array.from({ length: 9 }, () => ({ namespace: "n", from: "header:x" })) })).toMatch(/at most 8/);
    expect(tokenMappingSchema.parse({ semanticKey: "OK" })).toEqual({ semanticKey: "OK", subtypeTokens: [] });
  });
});

describe("inbound body", () => {
  it("parses JSON, GitHub's form mode, and keeps anything else as raw text", () => {
    expect(parseInboundBody(encode('{"a":1}'), "application/json")).toEqual({ a: 1 });
    expect(parseInboundBody(encode('{"a":1}'), null)).toEqual({ a: 1 });
    expect(parseInboundBody(encode(`payload=${encodeURIComponent('{"zen":"hi"}')}`), "application/x-www-form-urlencoded")).toEqual({ zen: "hi" });
    expect(parseInboundBody(encode("/tool create_task {}"), "text/plain")).toEqual({ raw: "/tool create_task {}" });
    expect(parseInboundBody(new Uint8Array(0), "application/json")).toBeNull();
  });
});

describe("source delivery ids", () => {
  const raw = encode('{"id":"evt_1"}');
  it("reads X-GitHub-Delivery, the Stripe event id, or the Vigil header chain", () => {
    expect(sourceDeliveryId("github", new Headers({ "X-GitHub-Delivery": "72d3162e" }), {}, raw)).toEqual({ ok: true, deliveryId: "72d3162e" });
    expect(sourceDeliveryId("github", new Headers(), {}, raw)).toMatchObject({ ok: false });
    expect(sourceDeliveryId("stripe", new Headers(), { id: "evt_1" }, raw)).toEqual({ ok: true, deliveryId: "evt_1" });
    expect(sourceDeliveryId("stripe", new Headers(), { raw: "x" }, raw)).toMatchObject({ ok: false });
    expect(sourceDeliveryId("vigil", new Headers({ "X-Vigil-Delivery": "d1", "Idempotency-Key": "k1" }), {}, raw)).toEqual({ ok: true, deliveryId: "d1" });
    expect(sourceDeliveryId("vigil", new Headers({ "Idempotency-Key": "k1" }), {}, raw)).toEqual({ ok: true, deliveryId: "k1" });
    const derived = sourceDeliveryId("vigil", new Headers(), {}, raw);
    expect(derived).toMatchObject({ ok: true, deliveryId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(sourceDeliveryId("vigil", new Headers(), {}, encode('{"id":"evt_2"}'))).not.toEqual(derived);
    expect(sourceDeliveryId("vigil", new Headers({ "X-Vigil-Delivery": "has space" }), {}, raw)).toMatchObject({ ok: false });
  });
});
