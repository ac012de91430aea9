/**
 * Webhook sources: how a verified delivery is read and turned into
 * typed tokens, and which id identifies it per signature scheme.
 *
 * Token mapping language (validated when the source is created):
 *
 *     {
 *       "semanticKey": "GITHUB_PUSH",                                         // constant, always emitted
 *       "subtypeTokens": [{ "namespace": "github.event", "from": "header:x-github-event" }],  // 0-8
 *       "entityIdFrom": "body:repository.full_name"                           // optional; one ref or 1-4
 *     }
 *
 * A ref is `header:<name>` (case-insensitive) or `body:<path>`: dot-separated keys into the JSON
 * body, a numeric segment indexing an array (`body:commits.0.id`), at most 8 segments. Strings are
 * trimmed, numbers and booleans rendered; a missing, empty, non-scalar or over-long value emits no
 * token. That is never an error: the delivery is already verified and a retry could not change it.
 */
import { z } from "zod";
import { sha256Hex } from "../ids/sha256";
import { TOKEN_LIMITS, tokens, type TypedToken } from "./tokens";
import type { HeaderSource, WebhookSignatureScheme } from "../egress/webhook-signature";
import { DELIVERY_ID } from "./external-trigger";

export const MAPPING_LIMITS = { subtypeTokens: 8, entityIdRefs: 4, pathSegments: 8, segmentLength: 64 } as const;

const HEADER_REF = /^header:[A-Za-z0-9-]{1,64}$/;
const BODY_REF = new RegExp(`^body:[A-Za-z0-9_$@-]{1,${MAPPING_LIMITS.segmentLength}}(\\.[A-Za-z0-9_$@-]{1,${MAPPING_LIMITS.segmentLength}}){0,${MAPPING_LIMITS.pathSegments - 1}}$`);

const valueRef = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine(
      (ref) => HEADER_REF.test(ref) || BODY_REF.test(ref),
      `${field} must be header:<name> or body:<dot.path> (at most ${MAPPING_LIMITS.pathSegments} segments of A-Z a-z 0-9 _ $ @ -)`,
    );

/** Zod schema of a token mapping; every message names its field. */
export const tokenMappingSchema = z.strictObject(
  {
    semanticKey: z
      .string({ error: "semanticKey is required (a constant such as GITHUB_PUSH)" })
      .regex(/^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/, "semanticKey must be 1-128 characters of A-Z a-z 0-9 _ . : - starting with a letter"),
    subtypeTokens: z
      .array(
        z.strictObject({
          namespace: z
            .string({ error: "subtypeTokens[].namespace must be a string" })
            .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "subtypeTokens[].namespace must be 1-128 characters of A-Z a-z 0-9 _ . : -"),
          from: valueRef("subtypeTokens[].from"),
        }),
        { error: "subtypeTokens must be an array" },
      )
      .max(MAPPING_LIMITS.subtypeTokens, `subtypeTokens may have at most ${MAPPING_LIMITS.subtypeTokens} entries`)
      .default([]),
    entityIdFrom: z
      .union([
        valueRef("entityIdFrom"),
        z.array(valueRef("entityIdFrom[]")).min(1, "entityIdFrom must not be empty").max(MAPPING_LIMITS.entityIdRefs, `entityIdFrom may list at most ${MAPPING_LIMITS.entityIdRefs} refs`),
      ])
      .optional(),
  },
  { error: (issue) => (issue.code === "unrecognized_keys" ? "tokenMapping allows only semanticKey, subtypeTokens, entityIdFrom" : undefined) },
);
export type TokenMapping = z.output<typeof tokenMappingSchema>;

/** A delivery as the mapping sees it: its headers and its parsed body (`undefined` when not JSON). */
export interface DeliveryView {
  headers: HeaderSource;
  body: unknown;
}

/** Resolves one ref to a token value, or `null` when it yields none. */
export function resolveRef(ref: string, view: DeliveryView): string | null {
  let value: unknown;
  if (ref.startsWith("header:")) {
    value = view.headers.get(ref.slice("header:".length));
  } else {
    value = view.body;
    for (const segment of ref.slice("body:".length).split(".")) {
      if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
      else if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.hasOwn(value, segment)) value = (value as Record<string, unknown>)[segment];
      else return null;
    }
  }
  if (typeof value === "number" || typeof value === "boolean") value = String(value);
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= TOKEN_LIMITS.valueMaxLength ? trimmed : null;
}

/** The typed tokens of one delivery: the semantic key, then whatever subtypes and entity ids resolve. */
export function mapDeliveryTokens(mapping: TokenMapping, view: DeliveryView): TypedToken[] {
  const out: TypedToken[] = [tokens.semanticKey(mapping.semanticKey)];
  for (const subtype of mapping.subtypeTokens) {
    const value = resolveRef(subtype.from, view);
    if (value !== null) out.push(tokens.subtype(subtype.namespace, value));
  }
  const entityRefs = mapping.entityIdFrom === undefined ? [] : typeof mapping.entityIdFrom === "string" ? [mapping.entityIdFrom] : mapping.entityIdFrom;
  for (const ref of entityRefs) {
    const value = resolveRef(ref, view);
    if (value !== null) out.push(tokens.entityId(value));
  }
  return out;
}

/**
 * The raw body as data: JSON when it parses (GitHub's form mode `payload=<json>` included), else
 * `{raw: text}`; an empty body is `null`. Called only after the signature or token is verified.
 */
export function parseInboundBody(raw: Uint8Array, contentType: string | null): unknown {
  if (raw.length === 0) return null;
  const text = new TextDecoder().decode(raw);
  if (contentType && /^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    const payload = new URLSearchParams(text).get("payload");
    if (payload !== null) {
      const parsed = tryJson(payload);
      if (parsed.ok) return parsed.value;
    }
  }
  const parsed = tryJson(text);
  return parsed.ok ? parsed.value : { raw: text };
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export type SourceDeliveryId = { ok: true; deliveryId: string } | { ok: false; message: string };

/**
 * A source delivery's id, per scheme: GitHub's `X-GitHub-Delivery` header; Stripe's event `id` from
 * the (signed) body; Vigil's `X-Vigil-Delivery` header, else `Idempotency-Key`, else
 * `sha256:<hex of the raw body>`. The GitHub header is not covered by its signature, so GitHub
 * replay protection is only as strong as that scheme allows (it signs no timestamp either).
 */
export function sourceDeliveryId(scheme: WebhookSignatureScheme, headers: HeaderSource, body: unknown, raw: Uint8Array): SourceDeliveryId {
  const checked = (value: unknown, what: string): SourceDeliveryId =>
    typeof value === "string" && DELIVERY_ID.test(value)
      ? { ok: true, deliveryId: value }
      : { ok: false, message: `${what} must be 1-200 printable ASCII characters without spaces` };
  switch (scheme) {
    case "github":
      return checked(headers.get("X-GitHub-Delivery"), "the X-GitHub-Delivery header");
    case "stripe": {
      const id = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>).id : undefined;
      return checked(id, "the event id (body field `id`)");
    }
    case "vigil": {
      for (const name of ["X-Vigil-Delivery", "Idempotency-Key"]) {
        const value = headers.get(name);
        if (value !== null) return checked(value, `the ${name} header`);
      }
      return { ok: true, deliveryId: `sha256:${sha256Hex(raw)}` };
    }
  }
}
