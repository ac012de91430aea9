import { describe, expect, it } from "vitest";
import { selectPlaybookRule } from "../../src/core/tools/playbook";
import { checkTenantPattern, tenantPatternMatches } from "../../src/core/tools/tenant-pattern";

/** Classic exponential-backtracking patterns: each stalls a backtracking engine on a long non-matching input. */
const EXPONENTIAL = ["(a|aa)*$", "(a+)+$", "(a|a)*b", "(\\w*)*!", "^(a?){40}a{40}$", "(x+x+)+y", "(.*a){20}"];

describe("tenant patterns run on a linear-time engine", () => {
  it("answers classic exponential patterns against long inputs (the match completes; no timing asserted)", () => {
    for (const pattern of EXPONENTIAL) {
      expect(checkTenantPattern(pattern)).toEqual({ ok: true });
      for (const text of ["a".repeat(65) + "!", "a".repeat(20_000) + "!", "x".repeat(5_000)]) {
        expect(typeof tenantPatternMatches(pattern, text)).toBe("boolean");
      }
    }
    expect(tenantPatternMatches("(a|aa)*$", "a".repeat(65) + "!")).toBe(true);
    expect(tenantPatternMatches("^(a|aa)*$", "a".repeat(20_000) + "!")).toBe(false);
    expect(tenantPatternMatches("^(a+)+$", "a".repeat(20_000))).toBe(true);
  });

  it("keeps the playbook's meaning: unanchored, case-insensitive search", () => {
    expect(tenantPatternMatches("^hi", "Hi there")).toBe(true);
    expect(tenantPatternMatches("there$", "hi THERE")).toBe(true);
    expect(tenantPatternMatches("\\bgym\\b", "to the gym now")).toBe(true);
    expect(tenantPatternMatches("^bye", "hi")).toBe(false);
    const rules = [{ when: { textPattern: "(a|aa)*c" }, reply: "x" }];
    expect(selectPlaybookRule(rules, { reason: "userInitiated", text: "a".repeat(100_000) })).toBeNull();
  });

  it("refuses at creation what RE2 cannot express, naming why", () => {
    for (const pattern of ["(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b"]) {
      const check = checkTenantPattern(pattern);
      expect(check.ok).toBe(false);
      expect(!check.ok && check.message).toContain("backreferences and lookaround are not supported");
    }
    const broken = checkTenantPattern("(");
    expect(broken.ok === false && broken.message).toMatch(/^must be a regular expression in RE2 syntax: /);
  });

  it("a stored pattern RE2 cannot compile never matches instead of throwing", () => {
    expect(tenantPatternMatches("(a)\\1", "aa")).toBe(false);
  });
});
