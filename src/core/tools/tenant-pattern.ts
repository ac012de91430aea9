import { RE2JS } from "re2js";

/**
 * Tenant-supplied regular expressions (playbook `textPattern`) run on RE2 (the `re2js` port): matching
 * is linear in the input whatever the pattern, so `(a|aa)*$` against a long message cannot stall the
 * isolate that serves every tenant. The price is RE2 syntax: no backreferences, no
 * lookaround, `\x{…}` instead of `\u…`; a pattern RE2 cannot express is refused when it is stored.
 */
export type PatternCheck = { ok: true } | { ok: false; message: string };

const MAX_CACHED = 256;
const cache = new Map<string, RE2JS | null>();

/** Whether `source` is a pattern RE2 can run, with a reason naming what it cannot express. */
export function checkTenantPattern(source: string): PatternCheck {
  try {
    RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
    return { ok: true };
  } catch (error) {
    const detail = String((error as Error)?.message ?? error).replace(/^error parsing regexp:\s*/, "");
    // re2js names the offending piece in backquotes: `(?=`, `(?<!`, `\1` …
    const unsupported = /`\(\?<?[=!]|`\\[0-9]/.test(detail)
      ? "backreferences and lookaround are not supported (patterns run on a linear-time RE2 engine)"
      : "must be a regular expression in RE2 syntax";
    return { ok: false, message: `${unsupported}: ${detail}` };
  }
}

/**
 * Case-insensitive unanchored search, as `new RegExp(source, "i").test(text)` did. A stored pattern that
 * no longer compiles (stored before RE2 was the engine) never matches rather than throwing mid-run.
 */
export function tenantPatternMatches(source: string, text: string): boolean {
  let compiled = cache.get(source);
  if (compiled === undefined) {
    try {
      compiled = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);
    } catch {
      compiled = null;
    }
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(source, compiled);
  }
  return compiled !== null && compiled.matcher(text).find();
}
