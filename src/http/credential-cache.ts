import { config } from "../config";
import { testOnly } from "../core/runtime/seams";

interface Entry<T> {
  value: T;
  storedAtMs: number;
  expiresAtMs: number;
}

/**
 * A per-isolate cache of verified credentials (issue 12 §1): a cached API key costs no Durable Object call.
 * Entries live at most `ttlMs` (config.auth.cacheTtlMs, ≤ 30 s), so a key revoked through another isolate stops
 * working there within that time; the isolate that revokes evicts at once. Bounded: a least recently used map, the
 * entry used longest ago goes first when it is full.
 */
export class CredentialCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly maxEntries: number = config.auth.cacheMaxEntries) {}

  /** The live entry, if any; with `maxAgeMs`, only one stored at most that long ago (a stream's re-check). */
  get(key: string, nowMs: number = Date.now(), maxAgeMs: number = Number.POSITIVE_INFINITY): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return nowMs - entry.storedAtMs <= maxAgeMs ? entry.value : undefined;
  }

  set(key: string, value: T, ttlMs: number, nowMs: number = Date.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, storedAtMs: nowMs, expiresAtMs: nowMs + ttlMs });
  }

  /** How many entries are held (never more than the cap). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every entry `matches` accepts (a revoked key, by its id). */
  evict(matches: (value: T) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}

/**
 * The cache TTL in force: config.auth.cacheTtlMs, or `VIGIL_AUTH_CACHE_TTL_MS` when the deployment enables the test
 * `settings` seam, never above the configured ceiling.
 */
export function credentialTtlMs(env: { VIGIL_FAULTS?: string; VIGIL_AUTH_CACHE_TTL_MS?: string }): number {
  const override = Number(testOnly(env, env.VIGIL_AUTH_CACHE_TTL_MS) ?? Number.NaN);
  return Number.isSafeInteger(override) && override >= 0 ? Math.min(override, config.auth.cacheTtlMs) : config.auth.cacheTtlMs;
}
