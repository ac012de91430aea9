/**
 * The master keyring: `VIGIL_MASTER_KEY` is the current key (everything new is sealed and signed under it);
 * `VIGIL_MASTER_KEY_PREVIOUS` (comma-separated) lists keys still accepted for opening and verifying, so a rotation
 * loses nothing. Each key is named by its version, `kid` = 8 lowercase hex of SHA-256("vigil-keyring|" + key): the
 * version a sealed value or a signed token carries, derived from the key so no counter has to be kept in step.
 * Pure (WebCrypto-free: the version uses the synchronous SHA-256).
 */
import { sha256Hex } from "../ids/sha256";
import { masterKeyProblem, MasterKeyMissingError } from "./master-key";

export interface MasterKey {
  kid: string;
  secret: string;
}

export interface Keyring {
  current: MasterKey;
  /** Older keys, newest first; accepted for opening and verifying only. */
  previous: MasterKey[];
}

/** A key's version label. */
export const keyVersion = (secret: string): string => sha256Hex(`vigil-keyring|${secret}`).slice(0, 8);

/** Where a keyring comes from: one key, a keyring, or the environment's two variables (read when first needed). */
export type KeySource = string | Keyring | { VIGIL_MASTER_KEY?: string | undefined; VIGIL_MASTER_KEY_PREVIOUS?: string | undefined };

const keyringCache = new Map<string, Keyring>();

/**
 * The keyring from the two variables; a missing or short current key throws `MasterKeyMissingError` (the edge answers
 * 503), a short previous key too (a typo there would silently stop old values opening). A keyring value passes through.
 */
export function keyringOf(current: KeySource | undefined, previous?: string | undefined): Keyring {
  if (typeof current === "object") return "current" in current && typeof current.current === "object" ? (current as Keyring) : keyringFromEnv(current as { VIGIL_MASTER_KEY?: string });
  const cacheKey = `${current ?? ""}\u0000${previous ?? ""}`;
  const known = keyringCache.get(cacheKey);
  if (known) return known;
  const problem = masterKeyProblem(current);
  if (problem !== null) throw new MasterKeyMissingError(problem);
  const older = (previous ?? "").split(",").map((key) => key.trim()).filter((key) => key !== "" && key !== current);
  for (const key of older) {
    const issue = masterKeyProblem(key);
    if (issue !== null) throw new MasterKeyMissingError(issue.replace("VIGIL_MASTER_KEY", "a VIGIL_MASTER_KEY_PREVIOUS entry"));
  }
  const ring: Keyring = { current: { kid: keyVersion(current!), secret: current! }, previous: [...new Set(older)].map((secret) => ({ kid: keyVersion(secret), secret })) };
  if (keyringCache.size > 16) keyringCache.clear();
  keyringCache.set(cacheKey, ring);
  return ring;
}

/** The deployment's keyring from its environment. */
export function keyringFromEnv(env: { VIGIL_MASTER_KEY?: string | undefined; VIGIL_MASTER_KEY_PREVIOUS?: string | undefined }): Keyring {
  return keyringOf(env.VIGIL_MASTER_KEY, env.VIGIL_MASTER_KEY_PREVIOUS);
}

/** Every key, current first. */
export const allKeys = (ring: Keyring): MasterKey[] => [ring.current, ...ring.previous];

/** The key with version `kid`, or null when the ring no longer holds it. */
export const keyByVersion = (ring: Keyring, kid: string): MasterKey | null => allKeys(ring).find((key) => key.kid === kid) ?? null;
