import { describe, expect, it } from "vitest";
import { checkToolInputSchema, validateToolArgs } from "../../src/tools/json-schema-check";

const good = { type: "object", properties: { customerId: { type: "string", pattern: "^c_" }, limit: { type: "integer", minimum: 1 } }, required: ["customerId"], additionalProperties: false };

describe("tenant tool input schemas", () => {
  it("accepts an object schema and validates arguments against it", () => {
    expect(checkToolInputSchema(good)).toEqual({ ok: true });
    expect(validateToolArgs(good, { customerId: "c_1" })).toEqual({ ok: true });
    const bad = validateToolArgs(good, { customerId: 7, extra: true });
    expect(bad.ok).toBe(false);
  });

  it("refuses non-object roots, mistyped keywords, remote refs, bad patterns and deep nesting", () => {
    expect(checkToolInputSchema({ type: "string" }).ok).toBe(false);
    expect(checkToolInputSchema([]).ok).toBe(false);
    expect(checkToolInputSchema({ type: "object", properties: { a: { type: "strnig" } } }).ok).toBe(false);
    expect(checkToolInputSchema({ type: "object", required: "a" }).ok).toBe(false);
    expect(checkToolInputSchema({ type: "object", properties: { a: { $ref: "https://example.com/s.json" } } }).ok).toBe(false);
    expect(checkToolInputSchema({ type: "object", properties: { a: { type: "string", pattern: "(" } } }).ok).toBe(false);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { a: deep } };
    expect(checkToolInputSchema(deep).ok).toBe(false);
  });

  it("refuses a local $ref that does not resolve", () => {
    expect(checkToolInputSchema({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }).ok).toBe(false);
    expect(checkToolInputSchema({ type: "object", $defs: { id: { type: "string" } }, properties: { a: { $ref: "#/$defs/id" } } })).toEqual({ ok: true });
  });
});
