/**
 * Registered extension slot keys (SPEC §7 "namespaced `extension`"): a tenant registers each
 * `<namespace>.<name>` key in its policy (`extensionSlots`) with a JSON Schema for the value and a
 * size cap. This is the one check both writers use — `PUT /v1/agents/:id/memory/slots/extension`
 * and the `memory_update_slot` tool — through `applySlotUpdate`'s `extensionSchemas`.
 */
import { Validator } from "@cfworker/json-schema";
import { linearSchema, describeSchemaError } from "../tools/json-schema-re2";
import { canonicalJson } from "../ids/hash";
import type { ExtensionSchemas, SlotIssue } from "./slots";

/** One registered key: its value's JSON Schema (2020-12) and the largest canonical JSON it may take. */
export interface ExtensionSlotRegistration {
  schema: Record<string, unknown>;
  maxChars: number;
  description?: string | undefined;
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
