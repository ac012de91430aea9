/**
 * Secrets at rest: AES-256-GCM under a key derived from the `VIGIL_MASTER_KEY`
 * string with HKDF-SHA-256, one key per purpose label, so a ciphertext sealed for one purpose
 * (a webhook source's signing secret) never opens under another (a provider key).
 *
 * Sealed form: `v2.<key version>.<iv b64url>.<ciphertext+tag b64url>` under the keyring's current key
 * (./keyring.ts), random 12-byte IV per seal; the legacy `v1.<iv>.<ciphertext>` (no key version) still opens under
 * any key of the ring. An optional `context` (the owning row's id) is bound as additional authenticated data, so a
 * ciphertext copied onto another row fails to open. WebCrypto only; no Workers or Node imports.
 */
import { allKeys, keyByVersion, keyringOf, type Keyring, type KeySource } from "./keyring";
import { requireMasterKey } from "./master-key";

export const SECRET_BOX_VERSION = "v2";
const LEGACY_VERSION = "v1";

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
/** `current`: sealed under the keyring's current key (else the caller may re-seal it). */
export type OpenResult = { ok: true; secret: string; current: boolean } | { ok: false; code: SecretBoxFailureCode; message: string };

export interface SecretBox {
  /** Encrypts `plaintext`; every call uses a fresh IV, so equal secrets seal differently. */
  seal(plaintext: string, context?: string): Promise<string>;
  /** Decrypts a sealed string; tampering, a wrong context or a key no longer in the ring is a failure value. */
  open(sealed: string, context?: string): Promise<OpenResult>;
  /** Whether `sealed` is already under the current key (a re-seal pass skips it). */
  isCurrent(sealed: string): boolean;
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

const aad = (version: string, context: string | undefined) => bytes(`${version}|${context ?? ""}`);

/**
 * A box for one purpose over a keyring (or one master key string: a ring of one). Keys are derived once each, on
 * first use; seals use the current key only.
 */
export function createSecretBox(keys: KeySource, purpose: string): SecretBox {
  let resolved: Keyring | null = null;
  // Resolved on first use: a deployment without a usable master key fails where a key is needed, not at start.
  const keyring = () => (resolved ??= keyringOf(keys));
  const derived = new Map<string, Promise<CryptoKey>>();
  const keyFor = (kid: string, secret: string) => {
    let key = derived.get(kid);
    if (!key) derived.set(kid, (key = derivePurposeKey(secret, purpose, "AES-GCM")));
    return key;
  };
  const decrypt = async (iv: Uint8Array<ArrayBuffer>, ciphertext: Uint8Array<ArrayBuffer>, additionalData: Uint8Array<ArrayBuffer>, kid: string, secret: string) =>
    decoder.decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, await keyFor(kid, secret), ciphertext));
  const undecryptable = { ok: false, code: "secret_undecryptable", message: "the secret does not authenticate (tampered, wrong context, or sealed under a key no longer in the keyring)" } as const;
  return {
    async seal(plaintext, context) {
      const data = bytes(plaintext);
      if (data.length > MAX_SECRET_BYTES) throw new RangeError(`secret-box: a secret may be at most ${MAX_SECRET_BYTES} bytes`);
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const { kid, secret } = keyring().current;
      const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad(SECRET_BOX_VERSION, context) }, await keyFor(kid, secret), data);
      return `${SECRET_BOX_VERSION}.${kid}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
    },
    async open(sealed, context) {
      const parts = sealed.split(".");
      const version = parts[0];
      if (parts.length < 3) return { ok: false, code: "secret_malformed", message: "a sealed secret is v2.<key version>.<iv>.<ciphertext>" };
      if (version !== SECRET_BOX_VERSION && version !== LEGACY_VERSION) return { ok: false, code: "secret_version_unsupported", message: `sealed secret version '${version}' is not supported` };
      const expected = version === SECRET_BOX_VERSION ? 4 : 3;
      if (parts.length !== expected) return { ok: false, code: "secret_malformed", message: "a sealed secret is v2.<key version>.<iv>.<ciphertext> (or v1.<iv>.<ciphertext>)" };
      const iv = fromBase64Url(parts[expected - 2]!);
      const ciphertext = fromBase64Url(parts[expected - 1]!);
      if (!iv || iv.length !== IV_BYTES) return { ok: false, code: "secret_malformed", message: "the IV must be 12 bytes of base64url" };
      if (!ciphertext || ciphertext.length < TAG_BYTES) return { ok: false, code: "secret_malformed", message: "the ciphertext must be base64url and include the 16-byte tag" };
      const ring = keyring();
      const candidates = version === SECRET_BOX_VERSION ? [keyByVersion(ring, parts[1]!)].filter((key) => key !== null) : allKeys(ring);
      for (const key of candidates) {
        try {
          const secret = await decrypt(iv, ciphertext, aad(version, context), key.kid, key.secret);
          return { ok: true, secret, current: version === SECRET_BOX_VERSION && key.kid === ring.current.kid };
        } catch {
          // the next key of the ring, if any
        }
      }
      return undecryptable;
    },
    isCurrent: (sealed) => sealed.startsWith(`${SECRET_BOX_VERSION}.${keyring().current.kid}.`),
  };
}
