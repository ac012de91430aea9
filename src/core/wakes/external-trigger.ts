/**
 * Per-agent external triggers (seed 004 "External Trigger
 * Capabilities"): ids, the URL token, and the delivery-id rule.
 *
 * - `triggerId = trg_<tenantId>_<20 chars>`: like an API key it names its tenant, so ingress reaches
 *   the right TenantDO without a global index. A new id is minted on provision and on every rotation.
 * - `token = base64url(HMAC-SHA-256(K, triggerId))`, `K = HKDF(VIGIL_MASTER_KEY, "vigil/agent-trigger-token")`.
 *   Being derived, the token is never stored: provisioning again re-derives the same URL, and only
 *   `sha256Hex(token)` is kept to verify deliveries (it still verifies after the master key changes).
 */
import { runKeys, threadIds } from "../ids/run-keys";
import { sha256Hex } from "../ids/sha256";
import { derivePurposeKey, SECRET_PURPOSES, toBase64Url } from "../egress/secret-box";
import { timingSafeEqual, type HeaderSource } from "../egress/webhook-signature";

export const TRIGGER_STATUSES = ["active", "rotated", "revoked"] as const;
export type TriggerStatus = (typeof TRIGGER_STATUSES)[number];

const TRIGGER_ID = /^trg_(t[0-9a-z]{16})_[0-9a-z]{20}$/;
const TENANT_ID = /^t[0-9a-z]{16}$/;
const SUFFIX = /^[0-9a-z]{20}$/;

/** `trg_<tenantId>_<suffix>`; the suffix is 20 characters of [0-9a-z] (random, or from a hash). */
export function formatTriggerId(tenantId: string, suffix: string): string {
  if (!TENANT_ID.test(tenantId) || !SUFFIX.test(suffix)) throw new TypeError("formatTriggerId: tenantId or suffix malformed");
  return `trg_${tenantId}_${suffix}`;
}

/** The tenant a trigger id routes to, or `null` when the id is not one Vigil issues. */
export function tenantIdOfTriggerId(triggerId: string): string | null {
  return TRIGGER_ID.exec(triggerId)?.[1] ?? null;
}

/** The HMAC key tokens are derived with (derive once per process and reuse). */
export const triggerTokenKey = (masterKey: string): Promise<CryptoKey> => derivePurposeKey(masterKey, SECRET_PURPOSES.agentTriggerToken, "HMAC");

/** The URL secret for a trigger: 43 characters of base64url (256 bits). */
export async function deriveTriggerToken(key: CryptoKey, triggerId: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", key, new Uint8Array(new TextEncoder().encode(`v1|${triggerId}`)));
  return toBase64Url(new Uint8Array(mac));
}

/** What is stored and compared: the token has 256 bits of entropy, so a plain SHA-256 suffices. */
export const hashTriggerToken = (token: string): string => sha256Hex(token);

/** Constant-time comparison of two lowercase hex digests. */
export function triggerTokenHashMatches(presentedHash: string, storedHash: string): boolean {
  const encoder = new TextEncoder();
  return timingSafeEqual(encoder.encode(presentedHash), encoder.encode(storedHash));
}

/** A delivery id is 1-200 printable ASCII characters, no spaces. */
export const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;

export type DeliveryIdResult = { ok: true; deliveryId: string; derived: boolean } | { ok: false; message: string };

/**
 * A trigger delivery's id: the `Idempotency-Key` header, else `X-Vigil-Delivery`, else
 * `sha256:<hex of the raw body>` — so a sender that retries the same bytes without an id is still
 * deduplicated (and two distinct events with identical bodies need an id header to count twice).
 */
export function triggerDeliveryId(headers: HeaderSource, rawBody: Uint8Array): DeliveryIdResult {
  for (const name of ["Idempotency-Key", "X-Vigil-Delivery"]) {
    const value = headers.get(name);
    if (value === null) continue;
    if (!DELIVERY_ID.test(value)) return { ok: false, message: `${name} must be 1-200 printable ASCII characters without spaces` };
    return { ok: true, deliveryId: value, derived: false };
  }
  return { ok: true, deliveryId: `sha256:${sha256Hex(rawBody)}`, derived: true };
}

export interface TriggerWake {
  tenantId: string;
  agentId: string;
  reason: "webhook";
  runKey: string;
  threadId: string;
  authority: "external_evidence";
  logicalChangeKey: string;
  input: { observation: { summary: string; data: unknown }; triggerId: string; deliveryId: string };
}

/**
 * The wake a verified trigger delivery becomes: `runKey = H(agentId, triggerId, deliveryId)` (so
 * duplicates collapse in the agent's inbox), an autonomous thread, and the body as an observation
 * whose authority is `external_evidence` — fixed here at admission, whatever the payload says.
 */
export function triggerWake(input: { tenantId: string; agentId: string; triggerId: string; deliveryId: string; logicalChangeKey: string; data: unknown }): TriggerWake {
  const runKey = runKeys.webhook(input.agentId, input.triggerId, input.deliveryId);
  return {
    tenantId: input.tenantId,
    agentId: input.agentId,
    reason: "webhook",
    runKey,
    threadId: threadIds.autonomous(input.agentId, runKey),
    authority: "external_evidence",
    logicalChangeKey: input.logicalChangeKey,
    input: {
      observation: { summary: `webhook delivery ${input.deliveryId} on trigger ${input.triggerId}`, data: input.data },
      triggerId: input.triggerId,
      deliveryId: input.deliveryId,
    },
  };
}
