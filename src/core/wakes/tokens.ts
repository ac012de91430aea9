/**
 * Typed notification tokens (seed 000 "Notification token representation contract").
 *
 * A token is `{tokenClass, tokenNamespace?, tokenValue}`; the namespace is present iff the class
 * is `subtypeToken`. `tokenKey` is the canonical identity used for dedupe, the subscription index
 * and diagnostics: `"{class}|{namespace ?? '-'}|{value}"`.
 *
 * Why namespaces may not contain `|`: the key format is fixed by the spec and unescaped, so a `|`
 * inside the namespace would make `subtypeToken|a|b|c` ambiguous. The value is the last field and
 * may contain anything, and class names contain no `|`, so `tokenKey` is injective on valid tokens
 * (`parseTokenKey` is its inverse).
 *
 * Semantic key values are not restricted to the constants below: tenants post their own keys
 * through `POST /v1/events` (e.g. `WORKOUT`).
 */
import { z } from "zod";

export const TOKEN_CLASSES = ["semanticKey", "subtypeToken", "entityId"] as const;
export type TokenClass = (typeof TOKEN_CLASSES)[number];

/** Length limits keep index rows and batch envelopes bounded; values are ids and short names. */
export const TOKEN_LIMITS = { namespaceMaxLength: 128, valueMaxLength: 512 } as const;

/** Semantic keys emitted by journal writes and agent mutations. */
export const SemanticKeys = {
  TASK: "TASK",
  CHECKLIST: "CHECKLIST",
  TIME_ENTRY: "TIME_ENTRY",
  DAY_PLAN: "DAY_PLAN",
  RATING: "RATING",
  ENTRY: "ENTRY",
  CATEGORY: "CATEGORY",
  agentChangedNotification: "agentChangedNotification",
  agentStateChangedNotification: "agentStateChangedNotification",
  agentMessageAppendedNotification: "agentMessageAppendedNotification",
} as const;
export type KnownSemanticKey = (typeof SemanticKeys)[keyof typeof SemanticKeys];

export const JOURNAL_SEMANTIC_KEYS = [
  SemanticKeys.TASK,
  SemanticKeys.CHECKLIST,
  SemanticKeys.TIME_ENTRY,
  SemanticKeys.DAY_PLAN,
  SemanticKeys.RATING,
  SemanticKeys.ENTRY,
  SemanticKeys.CATEGORY,
] as const;

export const AGENT_SEMANTIC_KEYS = [
  SemanticKeys.agentChangedNotification,
  SemanticKeys.agentStateChangedNotification,
  SemanticKeys.agentMessageAppendedNotification,
] as const;

export interface SemanticKeyToken {
  tokenClass: "semanticKey";
  tokenNamespace?: undefined;
  tokenValue: string;
}
export interface SubtypeToken {
  tokenClass: "subtypeToken";
  tokenNamespace: string;
  tokenValue: string;
}
export interface EntityIdToken {
  tokenClass: "entityId";
  tokenNamespace?: undefined;
  tokenValue: string;
}
/** A valid typed token; the union makes "namespace iff subtypeToken" a compile-time fact. */
export type TypedToken = SemanticKeyToken | SubtypeToken | EntityIdToken;

const valueSchema = z
  .string({ error: "tokenValue must be a string" })
  .min(1, "tokenValue must not be empty")
  .max(TOKEN_LIMITS.valueMaxLength, `tokenValue must be at most ${TOKEN_LIMITS.valueMaxLength} characters`);

const namespaceSchema = z
  .string({ error: "tokenNamespace is required for subtypeToken" })
  .min(1, "tokenNamespace must not be empty")
  .max(TOKEN_LIMITS.namespaceMaxLength, `tokenNamespace must be at most ${TOKEN_LIMITS.namespaceMaxLength} characters`)
  .refine((ns) => !ns.includes("|"), "tokenNamespace must not contain '|'");

const noExtraKeys = (tokenClass: TokenClass) => ({
  error: (issue: { code?: string }) =>
    issue.code === "unrecognized_keys"
      ? tokenClass === "subtypeToken"
        ? "subtypeToken allows only tokenClass, tokenNamespace, tokenValue"
        : `${tokenClass} must not have a tokenNamespace (or any other extra field)`
      : undefined,
});

/** Zod schema for one typed token; strict objects, so a stray namespace is rejected, not dropped. */
export const typedTokenSchema = z.discriminatedUnion(
  "tokenClass",
  [
    z.strictObject({ tokenClass: z.literal("semanticKey"), tokenValue: valueSchema }, noExtraKeys("semanticKey")),
    z.strictObject(
      { tokenClass: z.literal("subtypeToken"), tokenNamespace: namespaceSchema, tokenValue: valueSchema },
      noExtraKeys("subtypeToken"),
    ),
    z.strictObject({ tokenClass: z.literal("entityId"), tokenValue: valueSchema }, noExtraKeys("entityId")),
  ],
  {
    // Typed as invalid_union only, but a non-object input reaches this map as invalid_type.
    error: (issue: { code?: string }) =>
      issue.code === "invalid_type" ? "token must be an object" : "tokenClass must be one of semanticKey, subtypeToken, entityId",
  },
);

export type TokenValidation = { ok: true; token: TypedToken } | { ok: false; code: "invalid_token"; message: string };

/** Validates untrusted input as a typed token; every message names the failing field. */
export function validateToken(input: unknown): TokenValidation {
  const parsed = typedTokenSchema.safeParse(withoutUndefinedNamespace(input));
  if (parsed.success) return { ok: true, token: parsed.data as TypedToken };
  return { ok: false, code: "invalid_token", message: parsed.error.issues.map((issue) => issue.message).join("; ") };
}

// `{tokenNamespace: undefined}` is how TypeScript code spells "no namespace"; JSON never carries it.
function withoutUndefinedNamespace(input: unknown): unknown {
  if (typeof input !== "object" || input === null || !("tokenNamespace" in input) || input.tokenNamespace !== undefined) return input;
  const { tokenNamespace: _omitted, ...rest } = input;
  return rest;
}

/** Canonical token identity: `"{class}|{namespace ?? '-'}|{value}"`, exactly as the spec writes it. */
export function tokenKey(token: TypedToken): string {
  return `${token.tokenClass}|${token.tokenNamespace ?? "-"}|${token.tokenValue}`;
}

/** Inverse of `tokenKey` for valid tokens; `null` for a string no valid token produces. */
export function parseTokenKey(key: string): TypedToken | null {
  const first = key.indexOf("|");
  const second = first < 0 ? -1 : key.indexOf("|", first + 1);
  if (second < 0) return null;
  const tokenClass = key.slice(0, first);
  const namespace = key.slice(first + 1, second);
  const tokenValue = key.slice(second + 1);
  const candidate =
    tokenClass === "subtypeToken"
      ? { tokenClass, tokenNamespace: namespace, tokenValue }
      : namespace === "-"
        ? { tokenClass, tokenValue }
        : null;
  if (candidate === null) return null;
  const result = validateToken(candidate);
  return result.ok ? result.token : null;
}

/** Code-unit order, so the result is identical on every runtime and locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tokens deduplicated by `tokenKey` and sorted by it: the canonical token set of a batch or subscription. */
export function normalizeTokens(tokens: Iterable<TypedToken>): TypedToken[] {
  const byKey = new Map<string, TypedToken>();
  for (const token of tokens) {
    const key = tokenKey(token);
    if (!byKey.has(key)) byKey.set(key, copyToken(token));
  }
  return [...byKey.keys()].sort(compareStrings).map((key) => byKey.get(key)!);
}

function copyToken(token: TypedToken): TypedToken {
  return token.tokenClass === "subtypeToken"
    ? { tokenClass: token.tokenClass, tokenNamespace: token.tokenNamespace, tokenValue: token.tokenValue }
    : { tokenClass: token.tokenClass, tokenValue: token.tokenValue };
}

function build(candidate: unknown): TypedToken {
  const result = validateToken(candidate);
  // Constructors take programmer-supplied values, so an invalid one is a bug, not an outcome.
  if (!result.ok) throw new TypeError(`invalid token: ${result.message}`);
  return result.token;
}

/**
 * The schema's rules for a value and a namespace, checked without zod: the constructors run on every run report and
 * journal write. Anything they reject goes through `build`, which throws zod's message.
 */
const validValue = (value: unknown): value is string => typeof value === "string" && value.length >= 1 && value.length <= TOKEN_LIMITS.valueMaxLength;
const validNamespace = (namespace: unknown): namespace is string =>
  typeof namespace === "string" && namespace.length >= 1 && namespace.length <= TOKEN_LIMITS.namespaceMaxLength && !namespace.includes("|");

/** Token constructors for trusted code; they throw on invalid input (a bug). Untrusted input goes through `validateToken`. */
export const tokens = {
  semanticKey: (value: string): SemanticKeyToken =>
    validValue(value) ? { tokenClass: "semanticKey", tokenValue: value } : (build({ tokenClass: "semanticKey", tokenValue: value }) as SemanticKeyToken),
  subtype: (namespace: string, value: string): SubtypeToken =>
    validNamespace(namespace) && validValue(value)
      ? { tokenClass: "subtypeToken", tokenNamespace: namespace, tokenValue: value }
      : (build({ tokenClass: "subtypeToken", tokenNamespace: namespace, tokenValue: value }) as SubtypeToken),
  entityId: (value: string): EntityIdToken =>
    validValue(value) ? { tokenClass: "entityId", tokenValue: value } : (build({ tokenClass: "entityId", tokenValue: value }) as EntityIdToken),
} as const;
