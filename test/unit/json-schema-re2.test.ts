import { describe, expect, it } from "vitest";
import { extensionValidators } from "../../src/core/memory/extension-slots";
import { linearSchema } from "../../src/core/tools/json-schema-re2";
import { checkSchemaDocument, checkToolInputSchema, validateToolArgs } from "../../src/tools/json-schema-check";

/** Classic exponential-backtracking patterns: each stalls `RegExp` on a long non-matching input. */
const EXPONENTIAL = ["^(a|aa)*$", "^(a+)+$", "^(a|a)*b", "^(\\w*)*!$", "(x+x+)+y", "^(.*a){20}$"];
const objectOf = (pattern: string) => ({ type: "object", properties: { s: { type: "string", pattern } }, required: ["s"] });

describe("JSON Schema patterns in tenant schemas run on RE2", () => {
  it("tool arguments against classic exponential patterns and long inputs: validation completes with the right answer", () => {
    for (const pattern of EXPONENTIAL) {
      expect(checkToolInputSchema(objectOf(pattern))).toEqual({ ok: true });
      for (const text of ["a".repeat(65) + "!", "a".repeat(20_000) + "!", "x".repeat(5_000)]) {
        expect(typeof validateToolArgs(objectOf(pattern), { s: text }).ok).toBe("boolean");
      }
    }
    const refused = validateToolArgs(objectOf("^(a|aa)*$"), { s: "a".repeat(20_000) + "!" });
    expect(refused).toMatchObject({ ok: false, issues: expect.arrayContaining([{ path: "#/s", message: "String does not match pattern." }]) });
    expect(validateToolArgs(objectOf("^(a+)+$"), { s: "a".repeat(20_000) }).ok).toBe(true);
  });

  it("keeps JSON Schema's meaning: unanchored, case-sensitive; non-strings ignored; inside combinators; beside an existing allOf", () => {
    expect(validateToolArgs(objectOf("c_"), { s: "abc_d" }).ok).toBe(true);
    expect(validateToolArgs(objectOf("^c_"), { s: "C_1" }).ok).toBe(false);
    const either = { type: "object", properties: { v: { anyOf: [{ type: "string", pattern: "^x+$" }, { type: "integer" }] } } };
    expect(validateToolArgs(either, { v: "xxx" }).ok).toBe(true);
    expect(validateToolArgs(either, { v: 3 }).ok).toBe(true);
    expect(validateToolArgs(either, { v: "y" }).ok).toBe(false);
    const both = { type: "object", properties: { v: { pattern: "^a", format: "email", allOf: [{ maxLength: 30 }] } } };
    expect(validateToolArgs(both, { v: "a@example.com" }).ok).toBe(true);
    expect(validateToolArgs(both, { v: "a@example.com" + "m".repeat(30) }).ok).toBe(false);
    expect(validateToolArgs(both, { v: "b@example.com" }).ok).toBe(false);
    expect(validateToolArgs(both, { v: "abc" }).ok).toBe(false);
    expect(validateToolArgs(both, { v: 12 }).ok).toBe(true);
    const names = { type: "object", propertyNames: { pattern: "^[a-z]+$" } };
    expect(validateToolArgs(names, { ok: 1 }).ok).toBe(true);
    expect(validateToolArgs(names, { NotOk: 1 }).ok).toBe(false);
  });

  it("leaves data alone: a `pattern` member inside const/enum is a value, not the keyword", () => {
    const schema = { type: "object", properties: { v: { const: { pattern: "^(a|aa)*$" } } } };
    expect(linearSchema(schema)).toEqual(schema);
    expect(validateToolArgs(schema, { v: { pattern: "^(a|aa)*$" } }).ok).toBe(true);
  });

  it("refuses at registration what RE2 cannot run, and patternProperties, naming why", () => {
    for (const pattern of ["(a)\\1", "foo(?=bar)", "(?<!x)y"]) {
      const checked = checkToolInputSchema(objectOf(pattern));
      expect(checked).toMatchObject({ ok: false, message: expect.stringContaining("linear-time RE2 engine") });
    }
    const props = checkSchemaDocument({ type: "object", patternProperties: { "^(a|aa)*$": { type: "string" } } }, { label: "schema", maxBytes: 8192, objectRoot: false });
    expect(props).toMatchObject({ ok: false, message: expect.stringContaining("patternProperties") });
  });

  it("fails closed on a schema stored before: an RE2-incompatible pattern matches nothing, patternProperties admits nothing", () => {
    expect(validateToolArgs(objectOf("foo(?=bar)"), { s: "foobar" }).ok).toBe(false);
    const stored = { type: "object", patternProperties: { "^(a|aa)*$": { type: "string" } } };
    expect(validateToolArgs(stored, { ["a".repeat(40) + "!"]: "x" }).ok).toBe(false);
  });

  it("extension slot schemas run their patterns on RE2 too", () => {
    const check = extensionValidators({ "acme.code": { schema: { type: "string", pattern: "^(a|aa)*$" }, maxChars: 100_000 } })["acme.code"]!;
    expect(check("a".repeat(20_000) + "!")).toEqual([{ path: "", message: "String does not match pattern." }]);
    expect(check("a".repeat(20_000))).toEqual([]);
  });
});
