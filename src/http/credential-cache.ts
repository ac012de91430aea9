import { config } from "../config";
import { testOnly } from "../core/runtime/seams";

interface Entry<T> {
  value: T;
  expiresAtMs: number;
}

/**
 * A per-isolate cache of verified credentials (issue 12 §1): a cached API key costs no Durable Object call.
 * Entries live at most `ttlMs` (config.auth.cacheTtlMs, ≤ 30 s), so a key revoked through another isolate stops
 * working there within that time; the isolate that revokes evicts at once. Bounded: the oldest entry goes first.
 */
export class CredentialCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly maxEntries: number = config.auth.cacheMaxEntries) {}

  get(key: string, nowMs: number = Date.now()): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T, ttlMs: number, nowMs: number = Date.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expiresAtMs: nowMs + ttlMs });
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
