/**
 * Checks a tenant tool's `inputSchema` (JSON Schema 2020-12) when it is registered, with
 * @cfworker/json-schema: the document must be an object schema for the arguments object, small
 * (≤ config.tenantTools.maxInputSchemaBytes) and shallow (≤ 32 levels), use only local `$ref`s
 * (`#…`: nothing is ever fetched), have well-typed keywords (a compact meta-schema below),
 * `pattern`s RE2 can run (they run on RE2, never backtracking: src/core/tools/json-schema-re2.ts), no
 * `patternProperties`, and compile. Unknown keywords are allowed, as JSON Schema allows them.
 */
import { dereference, Validator, type Schema } from "@cfworker/json-schema";
import { config } from "../config";
import { checkSchemaPattern, describeSchemaError, linearSchema } from "../core/tools/json-schema-re2";

const TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"];
const SUB: Schema = { anyOf: [{ type: "boolean" }, { $ref: "#" }] };
const SUBS: Schema = { type: "object", additionalProperties: SUB };
const LIST: Schema = { type: "array", minItems: 1, items: SUB };
const COUNT: Schema = { type: "integer", minimum: 0 };
const NUMBER: Schema = { type: "number" };
const STRING: Schema = { type: "string" };

/** The keyword types of the 2020-12 core, applicator and validation vocabularies. */
const META: Schema = {
  type: "object",
  properties: {
    type: { anyOf: [{ enum: TYPES }, { type: "array", items: { enum: TYPES }, minItems: 1, uniqueItems: true }] },
    properties: SUBS,
    patternProperties: SUBS,
    $defs: SUBS,
    definitions: SUBS,
    dependentSchemas: SUBS,
    additionalProperties: SUB,
    unevaluatedProperties: SUB,
    propertyNames: SUB,
    items: SUB,
    prefixItems: LIST,
    unevaluatedItems: SUB,
    contains: SUB,
    not: SUB,
    if: SUB,
    then: SUB,
    else: SUB,
    allOf: LIST,
    anyOf: LIST,
    oneOf: LIST,
    required: { type: "array", items: STRING, uniqueItems: true },
    dependentRequired: { type: "object", additionalProperties: { type: "array", items: STRING, uniqueItems: true } },
    enum: { type: "array" },
    minLength: COUNT,
    maxLength: COUNT,
    minItems: COUNT,
    maxItems: COUNT,
    minProperties: COUNT,
    maxProperties: COUNT,
    minContains: COUNT,
    maxContains: COUNT,
    minimum: NUMBER,
    maximum: NUMBER,
    exclusiveMinimum: NUMBER,
    exclusiveMaximum: NUMBER,
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    uniqueItems: { type: "boolean" },
    pattern: STRING,
    format: STRING,
    $ref: STRING,
    $schema: STRING,
    $id: STRING,
    $anchor: STRING,
    title: STRING,
    description: STRING,
  },
};

const MAX_DEPTH = 32;

export type SchemaCheck = { ok: true } | { ok: false; message: string };

export function checkToolInputSchema(schema: unknown): SchemaCheck {
  return checkSchemaDocument(schema, { label: "inputSchema", maxBytes: config.tenantTools.maxInputSchemaBytes, objectRoot: true });
}

/**
 * The same checks for any stored JSON Schema a tenant registers (e.g. an extension slot's value schema,
 * src/core/memory/extension-slots.ts): `label` names it in messages; `objectRoot` demands `"type": "object"`.
 */
export function checkSchemaDocument(schema: unknown, options: { label: string; maxBytes: number; objectRoot: boolean }): SchemaCheck {
  const { label, maxBytes } = options;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return bad(`${label} must be a JSON Schema object`);
  if (JSON.stringify(schema).length > maxBytes) return bad(`${label} must be at most ${maxBytes} bytes of JSON`);
  const walked = walk(schema, label);
  if (!walked.ok) return walked;
  const root = schema as Schema;
  if (options.objectRoot && root.type !== "object") return bad(`${label} must describe the arguments object: its root needs "type": "object"`);
  const meta = new Validator(META, "2020-12", false).validate(schema);
  if (!meta.valid) return bad(`${label} is not a valid JSON Schema: ${meta.errors.filter((e) => e.keyword !== "$ref" && e.keyword !== "anyOf").slice(0, 3).map((e) => `${e.instanceLocation} ${e.error}`).join("; ") || "malformed keyword"}`);
  try {
    // Every $ref must resolve now: the validator would only notice when a call reaches it.
    const lookup = dereference(structuredClone(root));
    for (const sub of Object.values(lookup)) {
      const target = typeof sub === "object" ? sub.__absolute_ref__ : undefined;
      if (target !== undefined && lookup[target] === undefined) return bad(`${label} $ref ${JSON.stringify(sub !== true && sub !== false ? sub.$ref : "")} does not resolve`);
    }
    new Validator(linearSchema(root), "2020-12").validate({});
  } catch (error) {
    return bad(`${label} does not compile: ${String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 200)}`);
  }
  return { ok: true };
}

/** Validates tool arguments against a stored input schema; the failures name their locations. */
export function validateToolArgs(schema: Record<string, unknown>, args: unknown): { ok: true } | { ok: false; message: string; issues: Array<{ path: string; message: string }> } {
  const result = new Validator(linearSchema(schema), "2020-12", false).validate(args);
  if (result.valid) return { ok: true };
  const issues = result.errors.slice(0, 20).map((error) => ({ path: error.instanceLocation, message: describeSchemaError(error) }));
  return { ok: false, message: issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ").slice(0, 1_900), issues };
}

/** Depth, local `$ref`s only, and `pattern`s that compile — without recursion (deep input cannot overflow the stack). */
function walk(schema: object, label: string): SchemaCheck {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: schema, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (!value || typeof value !== "object") continue;
    if (depth > MAX_DEPTH) return bad(`${label} nests deeper than ${MAX_DEPTH} levels`);
    const entries = Array.isArray(value) ? value.map((item) => ["", item] as const) : Object.entries(value);
    for (const [key, member] of entries) {
      if (key === "$ref" && (typeof member !== "string" || !member.startsWith("#"))) return bad(`${label} may only use local $ref values (starting with #)`);
      if (key === "pattern" && typeof member === "string") {
        const checked = checkSchemaPattern(member);
        if (!checked.ok) return bad(`${label} pattern ${JSON.stringify(member).slice(0, 100)} ${checked.message}`);
      }
      if (key === "patternProperties" && member && typeof member === "object" && Object.keys(member).length > 0) {
        return bad(`${label} may not use patternProperties (its patterns would run on a backtracking engine); use propertyNames with a pattern, or list the properties`);
      }
      stack.push({ value: member, depth: depth + 1 });
    }
  }
  return { ok: true };
}

const bad = (message: string): SchemaCheck => ({ ok: false, message });
