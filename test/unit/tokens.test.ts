import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AGENT_SEMANTIC_KEYS,
  JOURNAL_SEMANTIC_KEYS,
  normalizeTokens,
  parseTokenKey,
  SemanticKeys,
  tokenKey,
  tokens,
  typedTokenSchema,
  validateToken,
  type TypedToken,
} from "../../src/core/wakes/tokens";

// A tiny alphabet full of separators makes accidental key collisions likely if the format allowed them.
const tricky = (minLength: number) => fc.string({ unit: fc.constantFrom("a", "b", "|", "-", "\\", " "), minLength, maxLength: 8 });
const value = fc.oneof(tricky(1), fc.string({ minLength: 1, maxLength: 30 }));
const namespace = fc.oneof(tricky(1), fc.string({ minLength: 1, maxLength: 20 })).filter((ns) => !ns.includes("|"));

const validTokenArb: fc.Arbitrary<TypedToken> = fc.oneof(
  fc.record({ tokenClass: fc.constant("semanticKey" as const), tokenValue: value }),
  fc.record({ tokenClass: fc.constant("subtypeToken" as const), tokenNamespace: namespace, tokenValue: value }),
  fc.record({ tokenClass: fc.constant("entityId" as const), tokenValue: value }),
);

describe("validateToken", () => {
  it("accepts each class in its canonical shape", () => {
    expect(validateToken({ tokenClass: "semanticKey", tokenValue: "TASK" }).ok).toBe(true);
    expect(validateToken({ tokenClass: "subtypeToken", tokenNamespace: "workout.type", tokenValue: "run" }).ok).toBe(true);
    expect(validateToken({ tokenClass: "entityId", tokenValue: "task_1" }).ok).toBe(true);
  });

  it("requires a namespace exactly when the class is subtypeToken", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("semanticKey", "subtypeToken", "entityId"),
        fc.option(namespace, { nil: undefined }),
        value,
        (tokenClass, tokenNamespace, tokenValue) => {
          const input = tokenNamespace === undefined ? { tokenClass, tokenValue } : { tokenClass, tokenNamespace, tokenValue };
          expect(validateToken(input).ok).toBe((tokenClass === "subtypeToken") === (tokenNamespace !== undefined));
        },
      ),
    );
  });

  it("names the failing field in its message", () => {
    const cases: Array<[unknown, string]> = [
      [{ tokenClass: "semanticKey", tokenNamespace: "x", tokenValue: "TASK" }, "semanticKey must not have a tokenNamespace"],
      [{ tokenClass: "entityId", tokenNamespace: "x", tokenValue: "t1" }, "entityId must not have a tokenNamespace"],
      [{ tokenClass: "subtypeToken", tokenValue: "run" }, "tokenNamespace is required for subtypeToken"],
      [{ tokenClass: "subtypeToken", tokenNamespace: "", tokenValue: "run" }, "tokenNamespace must not be empty"],
      [{ tokenClass: "subtypeToken", tokenNamespace: "a|b", tokenValue: "run" }, "tokenNamespace must not contain '|'"],
      [{ tokenClass: "entityId", tokenValue: "" }, "tokenValue must not be empty"],
      [{ tokenClass: "entityId", tokenValue: 7 }, "tokenValue must be a string"],
      [{ tokenClass: "category", tokenValue: "x" }, "tokenClass must be one of semanticKey, subtypeToken, entityId"],
      ["TASK", "token must be an object"],
    ];
    for (const [input, message] of cases) {
      const result = validateToken(input);
      expect(result).toMatchObject({ ok: false, code: "invalid_token" });
      if (!result.ok) expect(result.message).toContain(message);
    }
  });

  it("rejects any class outside the three", () => {
    fc.assert(
      fc.property(fc.string().filter((c) => !["semanticKey", "subtypeToken", "entityId"].includes(c)), value, (tokenClass, tokenValue) => {
        expect(validateToken({ tokenClass, tokenValue }).ok).toBe(false);
      }),
    );
  });

  it("rejects extra fields rather than silently dropping them", () => {
    expect(validateToken({ tokenClass: "entityId", tokenValue: "t1", extra: true }).ok).toBe(false);
  });

  it("treats an explicit undefined namespace as absent", () => {
    expect(validateToken({ tokenClass: "semanticKey", tokenNamespace: undefined, tokenValue: "TASK" })).toEqual({
      ok: true,
      token: { tokenClass: "semanticKey", tokenValue: "TASK" },
    });
  });

  it("bounds value and namespace length", () => {
    expect(validateToken({ tokenClass: "entityId", tokenValue: "x".repeat(512) }).ok).toBe(true);
    expect(validateToken({ tokenClass: "entityId", tokenValue: "x".repeat(513) }).ok).toBe(false);
    expect(validateToken({ tokenClass: "subtypeToken", tokenNamespace: "n".repeat(129), tokenValue: "v" }).ok).toBe(false);
  });

  it("accepts every generated valid token, through the zod schema too", () => {
    fc.assert(
      fc.property(validTokenArb, (token) => {
        expect(validateToken(token)).toEqual({ ok: true, token });
        expect(typedTokenSchema.safeParse(token).success).toBe(true);
      }),
    );
  });
});

describe("tokenKey", () => {
  it("is {class}|{namespace ?? '-'}|{value} exactly", () => {
    expect(tokenKey({ tokenClass: "semanticKey", tokenValue: "TASK" })).toBe("semanticKey|-|TASK");
    expect(tokenKey({ tokenClass: "subtypeToken", tokenNamespace: "workout.type", tokenValue: "run" })).toBe("subtypeToken|workout.type|run");
    expect(tokenKey({ tokenClass: "entityId", tokenValue: "a|b" })).toBe("entityId|-|a|b");
  });

  it("is injective on valid tokens", () => {
    fc.assert(
      fc.property(validTokenArb, validTokenArb, (a, b) => {
        expect(tokenKey(a) === tokenKey(b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: 2000 },
    );
  });

  it("is inverted by parseTokenKey", () => {
    fc.assert(
      fc.property(validTokenArb, (token) => {
        expect(parseTokenKey(tokenKey(token))).toEqual(token);
      }),
    );
  });

  it("parseTokenKey rejects strings no valid token produces", () => {
    for (const key of ["", "TASK", "semanticKey|TASK", "semanticKey|ns|TASK", "subtypeToken||v", "entityId|-|", "other|-|x"]) {
      expect(parseTokenKey(key)).toBeNull();
    }
  });
});

describe("normalizeTokens", () => {
  it("dedupes by tokenKey and sorts, whatever the input order or multiplicity", () => {
    fc.assert(
      fc.property(fc.array(validTokenArb, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 }), (list, picks) => {
        const noisy = [...list, ...picks.filter(() => list.length > 0).map((p) => list[p % list.length]!)].reverse();
        const normalized = normalizeTokens(list);
        expect(normalizeTokens(noisy)).toEqual(normalized);
        const keys = normalized.map(tokenKey);
        expect(keys).toEqual([...new Set(list.map(tokenKey))].sort());
        expect(normalizeTokens(normalized)).toEqual(normalized);
      }),
    );
  });
});

describe("constants and constructors", () => {
  it("names the spec's semantic keys", () => {
    expect(JOURNAL_SEMANTIC_KEYS).toEqual(["TASK", "CHECKLIST", "TIME_ENTRY", "DAY_PLAN", "RATING", "ENTRY", "CATEGORY"]);
    expect(AGENT_SEMANTIC_KEYS).toEqual([
      "agentChangedNotification",
      "agentStateChangedNotification",
      "agentMessageAppendedNotification",
    ]);
    expect(SemanticKeys.TASK).toBe("TASK");
  });

  it("builds valid tokens and throws on programmer error", () => {
    expect(tokens.semanticKey(SemanticKeys.TASK)).toEqual({ tokenClass: "semanticKey", tokenValue: "TASK" });
    expect(tokens.subtype("workout.type", "run")).toEqual({ tokenClass: "subtypeToken", tokenNamespace: "workout.type", tokenValue: "run" });
    expect(tokens.entityId("t1")).toEqual({ tokenClass: "entityId", tokenValue: "t1" });
    expect(() => tokens.entityId("")).toThrow(TypeError);
    expect(() => tokens.subtype("a|b", "x")).toThrow(/tokenNamespace/);
  });

  it("accepts exactly what validateToken accepts, with the same token (their checks skip zod on the valid path)", () => {
    const edgeString = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.constantFrom("", "|", "a|b", "x".repeat(128), "x".repeat(129), "x".repeat(512), "x".repeat(513), "😀".repeat(64), "😀".repeat(65)),
      fc.string({ unit: "grapheme", maxLength: 20 }),
    );
    const outcome = (build: () => TypedToken) => {
      try {
        return { ok: true as const, token: build() };
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        return { ok: false as const };
      }
    };
    const same = (built: ReturnType<typeof outcome>, candidate: unknown) => {
      const validated = validateToken(candidate);
      expect(built.ok).toBe(validated.ok);
      if (built.ok && validated.ok) expect(built.token).toStrictEqual(validated.token);
    };
    fc.assert(
      fc.property(edgeString, edgeString, (namespace, value) => {
        same(outcome(() => tokens.semanticKey(value)), { tokenClass: "semanticKey", tokenValue: value });
        same(outcome(() => tokens.entityId(value)), { tokenClass: "entityId", tokenValue: value });
        same(outcome(() => tokens.subtype(namespace, value)), { tokenClass: "subtypeToken", tokenNamespace: namespace, tokenValue: value });
      }),
      { numRuns: 500 },
    );
  });
});
