/**
 * Change provenance and notification-batch identity (seed 000 "Deterministic derivation
 * contract", "Coalescing contract", "Failure policy").
 *
 * - canonical unit: `v1|{origin}|{hostId}|{counter}|{payloadType}|{payloadId}` (unescaped, as specified);
 * - `changeUnitKey = sha256Hex(canonical)`;
 * - `logicalChangeKey = sha256Hex("v1|" + sortedUniqueChangeUnitKeys.join(","))`.
 *
 * The canonical string is not escaped, so `hostId` and `payloadType` may not contain `|`; `origin`
 * and `counter` cannot, and `payloadId` is last, so the canonical form is injective on valid units.
 * A batch without provenance is never given a key: all such batches would share one key and
 * dedupe each other's wakes away, so they fail closed with `missing_change_provenance`.
 */
import { z } from "zod";
import { H } from "../ids/hash";
import { runKeys, threadIds } from "../ids/run-keys";
import { sha256Hex } from "../ids/sha256";
import { compareStrings, normalizeTokens, validateToken, type TypedToken } from "./tokens";

/** Origins in Vigil: an API/tool write, a signed webhook delivery, a tenant-posted event. */
export const CHANGE_ORIGINS = ["local", "webhook", "event"] as const;
export type ChangeOrigin = (typeof CHANGE_ORIGINS)[number];

export interface ChangeUnit {
  origin: ChangeOrigin;
  hostId: string;
  /** Monotonic per host for `local`; 0 for external origins (see `changeUnits`). */
  counter: number;
  payloadType: string;
  payloadId: string;
}

const unpipedField = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1, `${name} must not be empty`)
    .max(256, `${name} must be at most 256 characters`)
    .refine((value) => !value.includes("|"), `${name} must not contain '|'`);

/** Zod schema for one change unit. */
export const changeUnitSchema = z.strictObject({
  origin: z.enum(CHANGE_ORIGINS, { error: "origin must be one of local, webhook, event" }),
  hostId: unpipedField("hostId"),
  counter: z.int({ error: "counter must be a safe integer" }).min(0, "counter must be >= 0"),
  payloadType: unpipedField("payloadType"),
  payloadId: z.string({ error: "payloadId must be a string" }).min(1, "payloadId must not be empty").max(512, "payloadId must be at most 512 characters"),
});

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Validates a change unit; the message names the failing field. */
export function validateChangeUnit(
  input: unknown,
): { ok: true; unit: ChangeUnit } | { ok: false; code: "invalid_change_unit"; message: string } {
  const parsed = changeUnitSchema.safeParse(input);
  if (parsed.success) return { ok: true, unit: parsed.data };
  return { ok: false, code: "invalid_change_unit", message: parsed.error.issues.map((issue) => issue.message).join("; ") };
}

/** `v1|{origin}|{hostId}|{counter}|{payloadType}|{payloadId}`. */
export function canonicalChangeUnit(unit: ChangeUnit): string {
  return `v1|${unit.origin}|${unit.hostId}|${unit.counter}|${unit.payloadType}|${unit.payloadId}`;
}

/** `sha256Hex(canonicalChangeUnit(unit))`. */
export function changeUnitKey(unit: ChangeUnit): string {
  return sha256Hex(canonicalChangeUnit(unit));
}

/** Deduplicated, lexicographically sorted keys: the persisted derivation evidence of a batch. */
export function sortedUniqueKeys(keys: Iterable<string>): string[] {
  return [...new Set(keys)].sort(compareStrings);
}

/**
 * `sha256Hex("v1|" + sortedUniqueKeys(changeUnitKeys).join(","))`. Throws on an empty list: callers
 * reach this only through `buildNotificationBatch`, which turns "no provenance" into a result.
 */
export function logicalChangeKey(changeUnitKeys: Iterable<string>): string {
  const sorted = sortedUniqueKeys(changeUnitKeys);
  if (sorted.length === 0) throw new RangeError("logicalChangeKey: no change units (missing_change_provenance)");
  return sha256Hex("v1|" + sorted.join(","));
}

/**
 * Change units per origin. External deliveries use counter 0 and a delivery-derived payloadId so
 * a redelivery yields the same unit (an arrival counter would give every duplicate a new key).
 */
export const changeUnits = {
  /** An API or tool write: hostId = the writer (tenant journal or agent), counter = its commit sequence. */
  local: (hostId: string, counter: number, payloadType: string, payloadId: string): ChangeUnit => ({
    origin: "local",
    hostId,
    counter,
    payloadType,
    payloadId,
  }),
  /** A signed webhook delivery: hostId = the server-issued source or trigger id. */
  webhook: (endpointId: string, deliveryId: string): ChangeUnit => ({
    origin: "webhook",
    hostId: endpointId,
    counter: 0,
    payloadType: "webhookDelivery",
    payloadId: deliveryId,
  }),
  /** `POST /v1/events`: `source` is tenant-chosen text, so it is hashed into payloadId rather than used as hostId. */
  event: (source: string, deliveryId: string): ChangeUnit => ({
    origin: "event",
    hostId: "events",
    counter: 0,
    payloadType: "eventDelivery",
    payloadId: H(source, deliveryId),
  }),
} as const;

/** Seed 000 `NotificationBatch` (the optional legacy `affectedTokens` mirror is not carried). */
export interface NotificationBatch {
  logicalChangeKey: string;
  /** Sorted, unique; derivation evidence persisted with the batch and every wake it causes. */
  changeUnitKeys: string[];
  /** Deduplicated by `tokenKey`, sorted by it. */
  typedTokens: TypedToken[];
  /** Diagnostics only; never a dedupe identity. */
  localBatchId?: string;
}

export type BatchResult =
  | { ok: true; batch: NotificationBatch }
  | { ok: false; code: "missing_change_provenance" | "invalid_change_unit" | "invalid_token"; message: string };

/** Builds a canonical batch; every unit and token is validated, and no units means no batch. */
export function buildNotificationBatch(input: {
  changeUnits: ReadonlyArray<ChangeUnit>;
  tokens: ReadonlyArray<TypedToken>;
  localBatchId?: string;
}): BatchResult {
  if (input.changeUnits.length === 0) {
    return { ok: false, code: "missing_change_provenance", message: "a notification batch needs at least one change unit" };
  }
  const keys: string[] = [];
  for (const [index, unit] of input.changeUnits.entries()) {
    const checked = validateChangeUnit(unit);
    if (!checked.ok) return { ok: false, code: checked.code, message: `changeUnits[${index}]: ${checked.message}` };
    keys.push(changeUnitKey(checked.unit));
  }
  const validTokens: TypedToken[] = [];
  for (const [index, token] of input.tokens.entries()) {
    const checked = validateToken(token);
    if (!checked.ok) return { ok: false, code: checked.code, message: `tokens[${index}]: ${checked.message}` };
    validTokens.push(checked.token);
  }
  const changeUnitKeys = sortedUniqueKeys(keys);
  const batch: NotificationBatch = {
    logicalChangeKey: logicalChangeKey(changeUnitKeys),
    changeUnitKeys,
    typedTokens: normalizeTokens(validTokens),
  };
  if (input.localBatchId !== undefined) batch.localBatchId = input.localBatchId;
  return { ok: true, batch };
}

/**
 * Key-preserving coalescing: batches merge (token sets unioned) only when they carry the same
 * `logicalChangeKey` and the same evidence; anything else stays a separate envelope. Output keeps
 * first-appearance order and the first batch's `localBatchId`.
 */
export function coalesceBatches(batches: ReadonlyArray<NotificationBatch>): NotificationBatch[] {
  const groups = new Map<string, { first: NotificationBatch; tokens: TypedToken[] }>();
  for (const batch of batches) {
    // Evidence is part of the group key so a forged or corrupt envelope can never absorb another.
    const groupKey = batch.logicalChangeKey + "\n" + batch.changeUnitKeys.join(",");
    const group = groups.get(groupKey);
    if (!group) groups.set(groupKey, { first: batch, tokens: [...batch.typedTokens] });
    else for (const token of batch.typedTokens) group.tokens.push(token);
  }
  return [...groups.values()].map(({ first, tokens }) => {
    const merged: NotificationBatch = {
      logicalChangeKey: first.logicalChangeKey,
      changeUnitKeys: [...first.changeUnitKeys],
      typedTokens: normalizeTokens(tokens),
    };
    if (first.localBatchId !== undefined) merged.localBatchId = first.localBatchId;
    return merged;
  });
}

/** The provenance part of a batch as it may arrive from storage or a queue message (fields possibly absent). */
export interface BatchProvenance {
  logicalChangeKey?: string | null;
  changeUnitKeys?: ReadonlyArray<string> | null;
}

export type ProvenanceCheck =
  | { ok: true; logicalChangeKey: string; changeUnitKeys: string[] }
  | { ok: false; code: "missing_change_provenance" | "invalid_change_provenance"; message: string };

/** Recomputes the key from the evidence; a batch that does not prove its own key cannot wake anyone. */
export function verifyBatchProvenance(batch: BatchProvenance): ProvenanceCheck {
  const keys = batch.changeUnitKeys ?? [];
  if (keys.length === 0 || !batch.logicalChangeKey) {
    return { ok: false, code: "missing_change_provenance", message: "batch has no change units or no logicalChangeKey" };
  }
  for (const [index, key] of keys.entries()) {
    const previous = keys[index - 1];
    if (!SHA256_HEX.test(key)) return invalid(`changeUnitKeys[${index}] is not a lowercase sha256 hex digest`);
    if (previous !== undefined && compareStrings(previous, key) >= 0) return invalid("changeUnitKeys must be sorted and unique");
  }
  if (logicalChangeKey(keys) !== batch.logicalChangeKey) return invalid("logicalChangeKey does not match changeUnitKeys");
  return { ok: true, logicalChangeKey: batch.logicalChangeKey, changeUnitKeys: [...keys] };
}

function invalid(message: string): ProvenanceCheck {
  return { ok: false, code: "invalid_change_provenance", message };
}

/** A wake job for one matched subscription; `runKey` is anchored to the batch's `logicalChangeKey`. */
export interface SubscriptionWake {
  agentId: string;
  subscriptionId: string;
  reason: "subscription";
  runKey: string;
  threadId: string;
  logicalChangeKey: string;
  changeUnitKeys: string[];
}

export type WakeResult =
  | { ok: true; wake: SubscriptionWake }
  | { ok: false; code: "missing_change_provenance" | "invalid_change_provenance"; message: string };

/**
 * Builds the wake for a matched subscription, failing closed when the batch's provenance is absent or inconsistent.
 * A subscription with a `sessionId` wakes into that conversation; otherwise the run gets a thread of its own.
 */
export function subscriptionWake(batch: BatchProvenance, target: { agentId: string; subscriptionId: string; sessionId?: string | undefined }): WakeResult {
  const provenance = verifyBatchProvenance(batch);
  if (!provenance.ok) return provenance;
  const runKey = runKeys.subscription(target.agentId, target.subscriptionId, provenance.logicalChangeKey);
  return {
    ok: true,
    wake: {
      agentId: target.agentId,
      subscriptionId: target.subscriptionId,
      reason: "subscription",
      runKey,
      threadId: target.sessionId ? threadIds.interactive(target.agentId, target.sessionId) : threadIds.autonomous(target.agentId, runKey),
      logicalChangeKey: provenance.logicalChangeKey,
      changeUnitKeys: provenance.changeUnitKeys,
    },
  };
}
