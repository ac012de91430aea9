/**
 * Seed 000 `AgentSlots` (core memory blocks): `primaryGoal`, `activeTaskId`, `openLoopIds`,
 * `preferenceByKey` and a namespaced `extension`, each with its own logical version (seed 001 §2.2).
 * One Durable Object is the single writer, so the versions serve optimistic concurrency
 * (`expectedVersion`) for the API and `memory_update_slot`.
 */
import { z } from "zod";
import { canonicalJson } from "../ids/hash";

export const SLOT_KEYS = ["primaryGoal", "activeTaskId", "openLoopIds", "preferenceByKey", "extension"] as const;
export type SlotKey = (typeof SLOT_KEYS)[number];

/** Seed 000 `AgentSlots`, one `<slot>Version` logical counter per slot. */
export interface AgentSlots {
  primaryGoal: string | null;
  primaryGoalVersion: number;
  activeTaskId: string | null;
  activeTaskIdVersion: number;
  openLoopIds: string[];
  openLoopIdsVersion: number;
  preferenceByKey: Record<string, string>;
  preferenceByKeyVersion: number;
  /** Namespaced keys only (`<namespace>.<name>`), each registered with a schema before use. */
  extension: Record<string, unknown>;
  extensionVersion: number;
}

/** Size bounds, so that slots always fit a run's context. */
export const SLOT_LIMITS = {
  primaryGoalMaxChars: 1_000,
  idMaxChars: 200,
  openLoopMaxItems: 50,
  preferenceMaxKeys: 50,
  preferenceValueMaxChars: 500,
  extensionMaxChars: 8_192,
} as const;

/** `<namespace>.<name>`, e.g. `gym.weeklyTarget`: seed 000 allows only namespaced extension fields. */
export const EXTENSION_KEY_PATTERN = /^[a-z][a-z0-9_-]*(\.[A-Za-z][A-Za-z0-9_-]*)+$/;
const PREFERENCE_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Registered extension keys and their value checks (issues, empty when valid); an unregistered key is
 * rejected. Built from the tenant policy by `extensionValidators` (src/core/memory/extension-slots.ts).
 */
export type ExtensionSchemas = Readonly<Record<string, (value: unknown) => SlotIssue[]>>;

const id = z.string().min(1).max(SLOT_LIMITS.idMaxChars);
const version = z.number().int().min(0);

const valueSchemas = {
  primaryGoal: z.string().trim().min(1).max(SLOT_LIMITS.primaryGoalMaxChars).nullable(),
  activeTaskId: id.nullable(),
  openLoopIds: z
    .array(id)
    .max(SLOT_LIMITS.openLoopMaxItems)
    .refine((ids) => new Set(ids).size === ids.length, "openLoopIds must be unique"),
  preferenceByKey: z
    .record(z.string().regex(PREFERENCE_KEY_PATTERN), z.string().max(SLOT_LIMITS.preferenceValueMaxChars))
    .refine((map) => Object.keys(map).length <= SLOT_LIMITS.preferenceMaxKeys, `at most ${SLOT_LIMITS.preferenceMaxKeys} preferences`),
  extension: z
    .record(z.string().regex(EXTENSION_KEY_PATTERN, "extension keys must be namespaced (<namespace>.<name>)"), z.json())
    .refine((map) => canonicalJson(map).length <= SLOT_LIMITS.extensionMaxChars, `extension must be at most ${SLOT_LIMITS.extensionMaxChars} chars`),
} satisfies Record<SlotKey, z.ZodType>;

/** The persisted shape (DB JSON and API); missing fields take their empty defaults. */
export const agentSlotsSchema = z.object({
  primaryGoal: valueSchemas.primaryGoal.default(null),
  primaryGoalVersion: version.default(0),
  activeTaskId: valueSchemas.activeTaskId.default(null),
  activeTaskIdVersion: version.default(0),
  openLoopIds: valueSchemas.openLoopIds.default([]),
  openLoopIdsVersion: version.default(0),
  preferenceByKey: valueSchemas.preferenceByKey.default({}),
  preferenceByKeyVersion: version.default(0),
  extension: valueSchemas.extension.default({}),
  extensionVersion: version.default(0),
});

/** Slots of a new agent: every value empty, every version 0. */
export function emptySlots(): AgentSlots {
  return {
    primaryGoal: null,
    primaryGoalVersion: 0,
    activeTaskId: null,
    activeTaskIdVersion: 0,
    openLoopIds: [],
    openLoopIdsVersion: 0,
    preferenceByKey: {},
    preferenceByKeyVersion: 0,
    extension: {},
    extensionVersion: 0,
  };
}

/** One validation failure, with the dotted path of the offending field. */
export interface SlotIssue {
  path: string;
  message: string;
}

function issuesOf(error: z.ZodError): SlotIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
}

/** Reads stored slots (e.g. the `agent_state.slots` JSON column). */
export function parseSlots(raw: unknown): { ok: true; slots: AgentSlots } | { ok: false; code: "invalid_slot"; issues: SlotIssue[] } {
  // Nothing stored (every agent until a slot is written): the schema's defaults, without a zod parse on every context
  // assembly. Exactly what the parse returns for `{}`.
  if (raw === null || raw === undefined || (typeof raw === "object" && !Array.isArray(raw) && Object.keys(raw).length === 0)) return { ok: true, slots: emptySlots() };
  const parsed = agentSlotsSchema.safeParse(raw ?? {});
  if (!parsed.success) return { ok: false, code: "invalid_slot", issues: issuesOf(parsed.error) };
  return { ok: true, slots: parsed.data as AgentSlots };
}

/** Narrows an API or tool supplied key to a slot key. */
export function isSlotKey(key: string): key is SlotKey {
  return (SLOT_KEYS as ReadonlyArray<string>).includes(key);
}

/** The version field that guards a slot. */
export function slotVersion(slots: AgentSlots, key: SlotKey): number {
  return slots[`${key}Version`];
}

/** Outcome of one slot write; failures are values, never exceptions. */
export type SlotUpdateResult =
  | { ok: true; slots: AgentSlots; key: SlotKey; version: number; changed: boolean }
  | { ok: false; code: "version_conflict"; key: SlotKey; expectedVersion: number; actualVersion: number }
  | { ok: false; code: "invalid_slot"; key: string; issues: SlotIssue[] };

/**
 * Replaces one slot's value, bumping its version. With `expectedVersion`, a mismatch is a
 * `version_conflict` and nothing changes; writing the value the slot already holds is a no-op that
 * keeps the version, so a retried request is idempotent.
 */
export function applySlotUpdate(
  slots: AgentSlots,
  key: string,
  value: unknown,
  expectedVersion?: number,
  options: { extensionSchemas?: ExtensionSchemas } = {},
): SlotUpdateResult {
  if (!isSlotKey(key)) return { ok: false, code: "invalid_slot", key, issues: [{ path: "", message: `unknown slot key: ${key}` }] };
  const actualVersion = slotVersion(slots, key);
  if (expectedVersion !== undefined && expectedVersion !== actualVersion) {
    return { ok: false, code: "version_conflict", key, expectedVersion, actualVersion };
  }
  const parsed = valueSchemas[key].safeParse(value);
  if (!parsed.success) return { ok: false, code: "invalid_slot", key, issues: issuesOf(parsed.error) };
  if (key === "extension") {
    const issues = checkExtension(parsed.data as Record<string, unknown>, options.extensionSchemas ?? {});
    if (issues.length > 0) return { ok: false, code: "invalid_slot", key, issues };
  }
  if (canonicalJson(parsed.data) === canonicalJson(slots[key])) return { ok: true, slots, key, version: actualVersion, changed: false };
  const next = { ...slots, [key]: parsed.data, [`${key}Version`]: actualVersion + 1 } as AgentSlots;
  return { ok: true, slots: next, key, version: actualVersion + 1, changed: true };
}

function checkExtension(extension: Record<string, unknown>, schemas: ExtensionSchemas): SlotIssue[] {
  const issues: SlotIssue[] = [];
  for (const [name, member] of Object.entries(extension).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const check = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
    if (!check) {
      issues.push({ path: name, message: `extension key is not registered: ${name} (register it in the tenant policy's extensionSlots)` });
      continue;
    }
    issues.push(...check(member).map((issue) => ({ path: issue.path ? `${name}.${issue.path}` : name, message: issue.message })));
  }
  return issues;
}

/** Deterministic text for a run's context; empty slots render as "". */
export function renderSlots(slots: AgentSlots): string {
  const lines: string[] = [];
  if (slots.primaryGoal !== null) lines.push(`primaryGoal: ${slots.primaryGoal}`);
  if (slots.activeTaskId !== null) lines.push(`activeTaskId: ${slots.activeTaskId}`);
  if (slots.openLoopIds.length > 0) lines.push(`openLoopIds: ${slots.openLoopIds.join(", ")}`);
  const preferences = Object.keys(slots.preferenceByKey).sort();
  if (preferences.length > 0) lines.push(`preferences: ${preferences.map((name) => `${name}=${slots.preferenceByKey[name]}`).join("; ")}`);
  if (Object.keys(slots.extension).length > 0) lines.push(`extension: ${canonicalJson(slots.extension)}`);
  return lines.join("\n");
}
