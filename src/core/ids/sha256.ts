import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/**
 * Synchronous SHA-256 (audited `@noble/hashes`), so that every deterministic id in the core is a plain pure function
 * and can be computed inside `transactionSync` (WebCrypto's digest is async). Strings are hashed as their UTF-8 bytes.
 * Pure JavaScript with no Workers dependency: the widget's browser bundle imports this file too.
 */
export function sha256Bytes(input: string | Uint8Array): Uint8Array {
  return sha256(typeof input === "string" ? utf8ToBytes(input) : input);
}

/** Lowercase hex of `bytes`. */
export const toHex = (bytes: Uint8Array): string => bytesToHex(bytes);

/** Lowercase hex SHA-256 of the UTF-8 bytes of `input`. */
export function sha256Hex(input: string | Uint8Array): string {
  return bytesToHex(sha256Bytes(input));
}
