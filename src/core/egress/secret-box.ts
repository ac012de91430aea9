/**
 * Secrets at rest: AES-256-GCM under a key derived from the `VIGIL_MASTER_KEY`
 * string with HKDF-SHA-256, one key per purpose label, so a ciphertext sealed for one purpose
 * (a webhook source's signing secret) never opens under another (a provider key).
 *
 * Sealed form: `v1.<iv b64url>.<ciphertext+tag b64url>`, random 12-byte IV per seal. An optional
 * `context` (the owning row's id) is bound as additional authenticated data, so a ciphertext copied
 * onto another row fails to open. WebCrypto only; no Workers or Node imports.
 */
import { requireMasterKey } from "./master-key";

export const SECRET_BOX_VERSION = "v1";

/** HKDF `info` labels. A label is part of the key: changing one makes its old ciphertexts unreadable. */
export const SECRET_PURPOSES = {
  webhookSourceSecret: "vigil/webhook-source-secret",
  providerSecret: "vigil/provider-secret",
  agentTriggerToken: "vigil/agent-trigger-token",
  outboundWebhookSecret: "vigil/outbound-webhook-secret",
  /** A stored Idempotency-Key answer that carries a secret (a new API key, a widget token). */
  idempotentSecretAnswer: "vigil/idempotent-secret-answer",
} as const;

/** Upper bound on a sealed plaintext: secrets are keys and tokens, not documents. */
export const MAX_SECRET_BYTES = 8192;

const IV_BYTES = 12;
const TAG_BYTES = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
// A fixed, public salt: HKDF's extract step only needs it to be constant per deployment.
const HKDF_SALT = bytes("vigil/secret-box/hkdf-salt/v1");
const B64URL = /^[A-Za-z0-9_-]+$/;

export type SecretBoxFailureCode = "secret_malformed" | "secret_version_unsupported" | "secret_undecryptable";
export type OpenResult = { ok: true; secret: string } | { ok: false; code: SecretBoxFailureCode; message: string };

export interface SecretBox {
  /** Encrypts `plaintext`; every call uses a fresh IV, so equal secrets seal differently. */
  seal(plaintext: string, context?: string): Promise<string>;
  /** Decrypts a sealed string; tampering, a wrong context or a wrong master key is a failure value. */
  open(sealed: string, context?: string): Promise<OpenResult>;
}

// A fresh ArrayBuffer-backed copy: WebCrypto's typings reject views over SharedArrayBuffer.
function bytes(input: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(typeof input === "string" ? encoder.encode(input) : input);
}

/** Unpadded base64url. */
export function toBase64Url(data: Uint8Array): string {
  let binary = "";
  for (const byte of data) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Strict unpadded base64url; `null` for anything else. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!B64URL.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * HKDF-SHA-256 from the master key string (its UTF-8 bytes are the input keying material) to a
 * non-extractable key for one purpose: AES-256-GCM for sealing, HMAC-SHA-256 for deriving tokens.
 */
export async function derivePurposeKey(masterKey: string, purpose: string, algorithm: "AES-GCM" | "HMAC"): Promise<CryptoKey> {
  requireMasterKey(masterKey);
  if (purpose === "") throw new TypeError("derivePurposeKey: purpose must not be empty");
  const base = await crypto.subtle.importKey("raw", bytes(masterKey), "HKDF", false, ["deriveKey"]);
  const params = { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: bytes(purpose) };
  return algorithm === "AES-GCM"
    ? crypto.subtle.deriveKey(params, base, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"])
    : crypto.subtle.deriveKey(params, base, { name: "HMAC", hash: "SHA-256", length: 256 }, false, ["sign", "verify"]);
}

const aad = (context: string | undefined) => bytes(`${SECRET_BOX_VERSION}|${context ?? ""}`);

/** A box for one purpose; the key is derived once, on first use. */
export function createSecretBox(masterKey: string, purpose: string): SecretBox {
  let key: Promise<CryptoKey> | null = null;
  const getKey = () => (key ??= derivePurposeKey(masterKey, purpose, "AES-GCM"));
  return {
    async seal(plaintext, context) {
      const data = bytes(plaintext);
      if (data.length > MAX_SECRET_BYTES) throw new RangeError(`secret-box: a secret may be at most ${MAX_SECRET_BYTES} bytes`);
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad(context) }, await getKey(), data);
      return `${SECRET_BOX_VERSION}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
    },
    async open(sealed, context) {
      const parts = sealed.split(".");
      if (parts.length !== 3) return { ok: false, code: "secret_malformed", message: "a sealed secret is v1.<iv>.<ciphertext>" };
      if (parts[0] !== SECRET_BOX_VERSION) return { ok: false, code: "secret_version_unsupported", message: `sealed secret version '${parts[0]}' is not supported` };
      const iv = fromBase64Url(parts[1]!);
      const ciphertext = fromBase64Url(parts[2]!);
      if (!iv || iv.length !== IV_BYTES) return { ok: false, code: "secret_malformed", message: "the IV must be 12 bytes of base64url" };
      if (!ciphertext || ciphertext.length < TAG_BYTES) return { ok: false, code: "secret_malformed", message: "the ciphertext must be base64url and include the 16-byte tag" };
      try {
        const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: aad(context) }, await getKey(), ciphertext);
        return { ok: true, secret: decoder.decode(plain) };
      } catch {
        return { ok: false, code: "secret_undecryptable", message: "the secret does not authenticate (tampered, wrong context or wrong master key)" };
      }
    },
  };
}
