/**
 * Synchronous SHA-256 over UTF-8 text, so that every deterministic id in the core
 * is a plain pure function (WebCrypto's digest is async and would leak promises
 * into hot paths such as token matching and dedupe). Verified against WebCrypto in tests.
 * Not node:crypto's `createHash` (workerd has it under nodejs_compat): for the ids hashed on a turn (under 200
 * bytes) it measured 3–4× slower in workerd than this code (its per-call object setup); it wins only from ~1 KB on
 * (docs/decisions.md "Tenant and request path (session 11)"), and the widget's browser bundle imports this file.
 */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const encoder = new TextEncoder();

/**
 * Scratch space reused by every call (issue 12 §8, session 11: the ids of a turn are hashed dozens of times, and the
 * per-call buffers, DataViews and `toString(16)` per byte cost more than the compression itself). Safe because a call
 * is synchronous and calls back into nothing: no second call can start while one is using them.
 */
let block = new Uint8Array(1024);
const w = new Int32Array(64);
const state = new Int32Array(8);
/** Inputs up to this many bytes keep their (grown) scratch buffer; larger ones get a buffer of their own. */
const KEPT_SCRATCH_BYTES = 64 * 1024;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Hashes `input` into `state` (the eight big-endian words of the digest). */
function digest(input: string | Uint8Array): void {
  // UTF-8 takes at most 3 bytes per UTF-16 unit; 72 more hold the padding and the length.
  const room = (typeof input === "string" ? input.length * 3 : input.length) + 72;
  let data = block;
  if (room > data.length) {
    data = new Uint8Array(room);
    if (room <= KEPT_SCRATCH_BYTES) block = data;
  }
  let length: number;
  if (typeof input === "string") length = encoder.encodeInto(input, data).written;
  else {
    data.set(input);
    length = input.length;
  }
  const paddedLength = ((length + 9 + 63) >> 6) << 6;
  data.fill(0, length, paddedLength);
  data[length] = 0x80;
  // The message length in bits as a 64-bit big-endian integer (inputs stay far below 2^53 bits).
  const high = Math.floor(length / 0x20000000);
  const low = (length * 8) >>> 0;
  data[paddedLength - 8] = high >>> 24; data[paddedLength - 7] = high >>> 16; data[paddedLength - 6] = high >>> 8; data[paddedLength - 5] = high;
  data[paddedLength - 4] = low >>> 24; data[paddedLength - 3] = low >>> 16; data[paddedLength - 2] = low >>> 8; data[paddedLength - 1] = low;

  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  for (let offset = 0; offset < paddedLength; offset += 64) {
    for (let i = 0, j = offset; i < 16; i++, j += 4) w[i] = (data[j]! << 24) | (data[j + 1]! << 16) | (data[j + 2]! << 8) | data[j + 3]!;
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!, b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, hh = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + hh) | 0;
  }
  state[0] = h0; state[1] = h1; state[2] = h2; state[3] = h3; state[4] = h4; state[5] = h5; state[6] = h6; state[7] = h7;
}

export function sha256Bytes(input: string | Uint8Array): Uint8Array {
  digest(input);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const word = state[i]!;
    out[i * 4] = word >>> 24; out[i * 4 + 1] = word >>> 16; out[i * 4 + 2] = word >>> 8; out[i * 4 + 3] = word;
  }
  return out;
}

export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += HEX[byte]!;
  return hex;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `input`. */
export function sha256Hex(input: string | Uint8Array): string {
  digest(input);
  let hex = "";
  for (let i = 0; i < 8; i++) {
    const word = state[i]!;
    hex += HEX[word >>> 24]! + HEX[(word >>> 16) & 0xff]! + HEX[(word >>> 8) & 0xff]! + HEX[word & 0xff]!;
  }
  return hex;
}
