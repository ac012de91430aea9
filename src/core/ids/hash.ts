import { sha256Hex } from "./sha256";

/**
 * Escapes one field so that no field value can contain a bare `|`:
 * `\` → `\\`, `|` → `\|`. Without it, H("a|b","c") would equal H("a","b|c").
 */
export function escapeField(field: string): string {
  // Most fields (ids, numbers) hold neither character: no regex pass for them (H runs dozens of times a turn).
  if (!field.includes("\\") && !field.includes("|")) return field;
  return field.replace(/\\/g, "\\\\").replace(/\|/g, "\\|");
}

/** `H` = lowercase hex SHA-256 of `"v1|" + fields.join("|")`, each field escaped. */
export function H(...fields: ReadonlyArray<string | number>): string {
  let text = "v1|";
  for (let i = 0; i < fields.length; i++) text += (i === 0 ? "" : "|") + escapeField(String(fields[i]));
  return sha256Hex(text);
}

/** Canonical JSON: object keys sorted, no insignificant whitespace, `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("canonicalJson: non-finite number");
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return "[" + value.map((item) => canonicalJson(item ?? null)).join(",") + "]";
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return "{" + entries.map(([key, member]) => JSON.stringify(key) + ":" + canonicalJson(member)).join(",") + "}";
}

/** SHA-256 of a value's canonical JSON: equal for any two values that differ only in key order. */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
