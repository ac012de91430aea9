/**
 * Registered extension slot keys (SPEC §7 "namespaced `extension`"): a tenant registers each
 * `<namespace>.<name>` key in its policy (`extensionSlots`) with a JSON Schema for the value and a
 * size cap. This is the one check both writers use — `PUT /v1/agents/:id/memory/slots/extension`
 * and the `memory_update_slot` tool — through `applySlotUpdate`'s `extensionSchemas`.
 */
import { Validator } from "@cfworker/json-schema";
import { linearSchema, describeSchemaError } from "../tools/json-schema-re2";
import { canonicalJson } from "../ids/hash";
import type { AgentSlots, ExtensionSchemas, SlotIssue } from "./slots";

/** One registered key: its value's JSON Schema (2020-12) and the largest canonical JSON it may take. */
export interface ExtensionSlotRegistration {
  schema: Record<string, unknown>;
  maxChars: number;
  description?: string | undefined;
  /** Whether the value may reach a model (NEED_TO_KNOW); absent or false: it never enters a provider request. */
  modelVisible?: boolean | undefined;
}

export type ExtensionSlotRegistry = Readonly<Record<string, ExtensionSlotRegistration>>;

/** Limits on the registry itself (policy validation). */
export const EXTENSION_REGISTRY_LIMITS = { maxKeys: 50, maxSchemaBytes: 8_192 } as const;

/** The per-key checks `applySlotUpdate` runs on an `extension` write; keys absent here are refused as unregistered. */
export function extensionValidators(registry: ExtensionSlotRegistry): ExtensionSchemas {
  const checks: Record<string, (value: unknown) => SlotIssue[]> = {};
  for (const [key, registration] of Object.entries(registry)) {
    checks[key] = (value) => checkRegistered(registration, value);
  }
  return checks;
}

function checkRegistered(registration: ExtensionSlotRegistration, value: unknown): SlotIssue[] {
  const size = canonicalJson(value).length;
  if (size > registration.maxChars) return [{ path: "", message: `value is ${size} chars of JSON; this key allows at most ${registration.maxChars}` }];
  // The schema was checked (meta-schema, local $refs only, compiles) when the policy was written.
  // Its patterns run on RE2 (src/core/tools/json-schema-re2.ts): a tenant's pattern cannot stall the isolate.
  const result = new Validator(linearSchema(registration.schema), "2020-12", false).validate(value);
  if (result.valid) return [];
  return result.errors.slice(0, 10).map((error) => ({ path: error.instanceLocation.replace(/^#\/?/, "").replace(/\//g, "."), message: describeSchemaError(error) }));
}

/**
 * NEED_TO_KNOW for extension slots (seed 000 §4.1.4): the slots as a model may see them — only the extension keys
 * whose registration says `modelVisible: true`; unregistered keys and keys registered without it are dropped.
 */
export function modelVisibleSlots(slots: AgentSlots, registry: ExtensionSlotRegistry): AgentSlots {
  const extension = Object.fromEntries(Object.entries(slots.extension).filter(([key]) => registry[key]?.modelVisible === true));
  return { ...slots, extension };
}

/** Strings shorter than this are not searched for in the bytes (a `true` or a small number is everywhere). */
export const WITHHELD_MIN_CHARS = 8;

/**
 * What the final guard looks for in a provider request's bytes: every string of a withheld extension value (at least
 * `WITHHELD_MIN_CHARS` long), as it would appear inside one or two levels of JSON string encoding. Finding one
 * means the projection was bypassed, and the request is refused.
 */
export function withheldNeedles(slots: AgentSlots, registry: ExtensionSlotRegistry): Array<{ key: string; needle: string }> {
  const needles: Array<{ key: string; needle: string }> = [];
  for (const [key, value] of Object.entries(slots.extension)) {
    if (registry[key]?.modelVisible === true) continue;
    for (const leaf of stringLeaves(value)) {
      if (leaf.length < WITHHELD_MIN_CHARS) continue;
      const once = JSON.stringify(leaf).slice(1, -1);
      for (const needle of new Set([leaf, once, JSON.stringify(once).slice(1, -1)])) needles.push({ key, needle });
    }
  }
  return needles;
}

/** The extension keys whose withheld strings occur in `body` (empty: nothing withheld is in it). */
export function withheldFoundIn(body: string, needles: ReadonlyArray<{ key: string; needle: string }>): string[] {
  return [...new Set(needles.filter(({ needle }) => body.includes(needle)).map(({ key }) => key))];
}

function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
  else if (value && typeof value === "object") for (const item of Object.values(value)) stringLeaves(item, out);
  return out;
}
