/**
 * `pattern` in tenant-supplied JSON Schemas (tool input schemas, extension slot schemas) on RE2 (`re2js`), as
 * playbook patterns are (src/core/tools/tenant-pattern.ts): @cfworker/json-schema runs `pattern` with the backtracking
 * `RegExp`, so `^(a|aa)*$` against a long argument would stall the isolate that serves every tenant.
 *
 * The validator has no hook for its `pattern` keyword, but it does look custom formats up in its exported
 * `format` table. So before a schema is validated, each `"pattern": P` becomes `"format": "<tag>P"` (or, when the
 * schema has a format already, one more `allOf` member `{"format": "<tag>P"}`: same meaning, since a pattern
 * constrains strings only and a schema holding just a format evaluates no properties),
 * and the tag's entry, registered right then, matches with RE2. `patternProperties` (patterns over property names,
 * no such hook) is refused when a schema is registered, and fails closed in a schema stored before.
 */
import { format, type OutputUnit, type Schema } from "@cfworker/json-schema";
import { RE2JS } from "re2js";

const TAG = "vigil-re2:";
/** Members holding data, never subschemas: a `"pattern"` inside them is a value, not the keyword. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);
const MAX_REGISTERED = 512;

export type PatternCheck = { ok: true } | { ok: false; message: string };

/** Whether RE2 can run `source` (JSON Schema patterns are case-sensitive, unanchored searches). */
export function checkSchemaPattern(source: string): PatternCheck {
  try {
    RE2JS.compile(source);
    return { ok: true };
  } catch (error) {
    const detail = String((error as Error)?.message ?? error).replace(/^error parsing regexp:\s*/, "");
    return { ok: false, message: `is not supported: patterns run on a linear-time RE2 engine (no backreferences or lookaround): ${detail}`.slice(0, 300) };
  }
}

/**
 * A copy of `schema` the validator can run without backtracking: every `pattern` keyword rewritten to a
 * registered RE2 format; a `patternProperties` left in it makes every instance it reaches invalid.
 */
export function linearSchema(schema: Schema | Record<string, unknown>): Schema {
  const patterns = new Set<string>();
  const rewritten = rewrite(schema, patterns) as Schema;
  register(patterns);
  return rewritten;
}

/** The validator's message for a rewritten pattern names the format tag; say what the schema said. */
export function describeSchemaError(error: OutputUnit): string {
  return error.keyword === "format" && error.error.includes(`"${TAG}`) ? "String does not match pattern." : error.error;
}

function rewrite(value: unknown, patterns: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, patterns));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  let pattern: string | undefined;
  for (const [key, member] of Object.entries(value)) {
    if (key === "pattern" && typeof member === "string") pattern = member;
    // Fails closed: `not: {}` rejects every instance the schema reaches.
    else if (key === "patternProperties" && member && typeof member === "object" && Object.keys(member).length > 0) out.not = {};
    else out[key] = DATA_KEYWORDS.has(key) ? member : rewrite(member, patterns);
  }
  if (pattern !== undefined) {
    patterns.add(pattern);
    // The format slot when free (the validator's errors then read as for the pattern), else one more allOf member.
    if (out.format === undefined) out.format = TAG + pattern;
    else out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { format: TAG + pattern }];
  }
  return out;
}

const registered = new Map<string, true>();

/**
 * Registers one format per pattern, synchronously just before the validation that needs it (validation is
 * synchronous too, so nothing evicts an entry in between). Old entries are evicted first, never the ones of the
 * schema at hand, so the table stays bounded however many schemas an isolate sees.
 */
function register(patterns: Set<string>): void {
  for (const pattern of patterns) registered.delete(pattern);
  for (const old of registered.keys()) {
    if (registered.size + patterns.size <= MAX_REGISTERED) break;
    registered.delete(old);
    delete format[TAG + old];
  }
  for (const pattern of patterns) {
    registered.set(pattern, true);
    if (format[TAG + pattern]) continue;
    let compiled: RE2JS | null = null;
    try {
      compiled = RE2JS.compile(pattern);
    } catch {
      // Stored before RE2 was the engine and RE2 cannot run it: no string matches (fails closed).
    }
    format[TAG + pattern] = (instance: string) => compiled !== null && compiled.matcher(instance).find();
  }
}
