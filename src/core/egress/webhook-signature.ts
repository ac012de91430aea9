/**
 * Inbound webhook signature verification and outbound signing: HMAC-SHA256 over the RAW body bytes via WebCrypto, compared in constant time.
 *
 * Schemes:
 * - `vigil`  — `Vigil-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, HMAC of `"<t>." + rawBody`;
 * - `stripe` — `Stripe-Signature`, same shape and signed payload as `vigil` (other keys such as v0 ignored);
 * - `github` — `X-Hub-Signature-256: sha256=<hex>`, HMAC of `rawBody` alone. GitHub signs no timestamp,
 *   so replay protection for this scheme relies on deduplicating the `X-GitHub-Delivery` id.
 *
 * Secrets are strings used as their UTF-8 bytes (as GitHub and Stripe do). Several secrets may be
 * given during rotation; several v1 entries may be sent for the same reason. Any pair matching passes.
 */
export const WEBHOOK_SIGNATURE_SCHEMES = ["vigil", "github", "stripe"] as const;
export type WebhookSignatureScheme = (typeof WEBHOOK_SIGNATURE_SCHEMES)[number];

/** Replay window for timestamped schemes, applied to both past and future skew. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
/** Upper bound on v1 entries per header and on secrets per check, so one request does bounded work. */
export const MAX_SIGNATURE_CANDIDATES = 8;

export const SIGNATURE_HEADERS: Record<WebhookSignatureScheme, string> = {
  vigil: "Vigil-Signature",
  github: "X-Hub-Signature-256",
  stripe: "Stripe-Signature",
};

export type WebhookSignatureFailureCode = "signature_missing" | "signature_invalid" | "timestamp_stale" | "signature_malformed";

export type WebhookSignatureResult =
  | { ok: true; scheme: WebhookSignatureScheme; timestamp: number | null }
  | { ok: false; scheme: WebhookSignatureScheme; code: WebhookSignatureFailureCode; message: string };

/** The subset of `Headers` the verifier reads (header names are case-insensitive there). */
export interface HeaderSource {
  get(name: string): string | null;
}

export interface VerifyWebhookInput {
  scheme: WebhookSignatureScheme;
  headers: HeaderSource;
  rawBody: Uint8Array | string;
  /** The source's secret, or its current and previous secrets while rotating. */
  secrets: string | readonly string[];
  nowMs: number;
  toleranceSeconds?: number;
}

const encoder = new TextEncoder();
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;

// A fresh ArrayBuffer-backed copy: WebCrypto's typings reject views over SharedArrayBuffer.
function toBytes(data: Uint8Array | string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(typeof data === "string" ? encoder.encode(data) : data);
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** Compares without an early exit, so timing does not reveal how many leading bytes matched. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

async function hmacSha256(secret: string, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
}

/** Lowercase hex HMAC-SHA256 of `data` keyed by the UTF-8 bytes of `secret`. */
export async function hmacSha256Hex(secret: string, data: Uint8Array | string): Promise<string> {
  return bytesToHex(await hmacSha256(secret, toBytes(data)));
}

/** The bytes a timestamped scheme signs: `"<t>."` followed by the raw body, never re-encoded. */
function timestampedPayload(t: number, body: Uint8Array | string): Uint8Array<ArrayBuffer> {
  return concat(encoder.encode(`${t}.`), toBytes(body));
}

/** The `Vigil-Signature` header value for an outbound delivery: `t=<t>,v1=<hex>`. `t` is unix seconds. */
export async function signVigil(secret: string, body: Uint8Array | string, t: number): Promise<string> {
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError("signVigil: t must be a non-negative integer (unix seconds)");
  return `t=${t},v1=${bytesToHex(await hmacSha256(secret, timestampedPayload(t, body)))}`;
}

type Parsed = { ok: true; t: number | null; signatures: Uint8Array[] } | { ok: false; message: string };

function parseTimestamped(header: string, scheme: WebhookSignatureScheme): Parsed {
  let t: number | null = null;
  const signatures: Uint8Array[] = [];
  for (const item of header.split(",")) {
    const eq = item.indexOf("=");
    if (eq <= 0) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} item '${item.trim()}' is not key=value` };
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === "t") {
      if (t !== null || !/^\d{1,12}$/.test(value)) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} needs exactly one integer t` };
      t = Number(value);
    } else if (key === "v1") {
      if (!HEX_SIGNATURE.test(value)) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} v1 must be 64 hex characters` };
      signatures.push(hexToBytes(value));
    }
  }
  if (t === null) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} has no t` };
  if (signatures.length === 0) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} has no v1 signature` };
  if (signatures.length > MAX_SIGNATURE_CANDIDATES) return { ok: false, message: `${SIGNATURE_HEADERS[scheme]} has more than ${MAX_SIGNATURE_CANDIDATES} v1 entries` };
  return { ok: true, t, signatures };
}

function parseGitHub(header: string): Parsed {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match?.[1]) return { ok: false, message: "X-Hub-Signature-256 must be sha256=<64 hex characters>" };
  return { ok: true, t: null, signatures: [hexToBytes(match[1])] };
}

/**
 * Verifies one delivery. Order: header present → well-formed → HMAC matches some (secret, v1) pair
 * → timestamp within the tolerance. The HMAC is checked before the clock so a forged request is
 * always `signature_invalid`, whatever its `t`.
 */
export async function verifyWebhookSignature(input: VerifyWebhookInput): Promise<WebhookSignatureResult> {
  const { scheme } = input;
  const fail = (code: WebhookSignatureFailureCode, message: string): WebhookSignatureResult => ({ ok: false, scheme, code, message });
  const secrets = (typeof input.secrets === "string" ? [input.secrets] : input.secrets).filter((secret) => secret !== "");
  if (secrets.length === 0 || secrets.length > MAX_SIGNATURE_CANDIDATES) {
    throw new RangeError(`verifyWebhookSignature: give 1-${MAX_SIGNATURE_CANDIDATES} non-empty secrets`);
  }
  const header = input.headers.get(SIGNATURE_HEADERS[scheme]);
  if (header === null || header.trim() === "") return fail("signature_missing", `${SIGNATURE_HEADERS[scheme]} header is missing`);
  const parsed = scheme === "github" ? parseGitHub(header) : parseTimestamped(header, scheme);
  if (!parsed.ok) return fail("signature_malformed", parsed.message);

  const payload = parsed.t === null ? toBytes(input.rawBody) : timestampedPayload(parsed.t, input.rawBody);
  let matched = false;
  for (const secret of secrets) {
    const expected = await hmacSha256(secret, payload);
    // No early exit: every candidate is compared, so timing does not reveal which one matched.
    for (const signature of parsed.signatures) matched = timingSafeEqual(expected, signature) || matched;
  }
  if (!matched) return fail("signature_invalid", `${SIGNATURE_HEADERS[scheme]} does not match the body`);

  if (parsed.t !== null) {
    const tolerance = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
    const skew = Math.abs(Math.floor(input.nowMs / 1000) - parsed.t);
    if (!(skew <= tolerance)) return fail("timestamp_stale", `timestamp is ${skew}s from now; the window is ${tolerance}s`);
  }
  return { ok: true, scheme, timestamp: parsed.t };
}
