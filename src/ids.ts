const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A random, URL-safe, lowercase id with a type prefix (`ag_…`, `key_…`). */
export function randomId(prefix: string, length = 20): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let id = "";
  for (const byte of bytes) id += ALPHABET[byte & 31];
  return `${prefix}${id}`;
}

/** A random secret of 32 bytes, base64url. */
export function randomSecret(bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
