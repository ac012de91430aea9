import { eq } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { consumeRateLimit, type RateLimitDecision, type RateLimitState } from "../../core/rate-limit";
import { counters } from "../../db/common-schema";

/**
 * Loads, decides (core) and stores one rate-limit counter inside the calling DO. Sliding window: a fixed window
 * aligned to the clock lets a burst of 2× the limit through across a window edge ("20 turns a minute" would allow 40).
 */
export function consumeCounter(
  db: BaseSQLiteDatabase<"sync", unknown, Record<string, unknown>>,
  key: string,
  limit: number,
  windowMs: number,
  nowMs: number = Date.now(),
): RateLimitDecision {
  const row = db.select().from(counters).where(eq(counters.key, key)).get();
  const decision = consumeRateLimit((row?.state as RateLimitState | undefined) ?? null, nowMs, limit, windowMs, { algorithm: "sliding_window" });
  if (decision.allowed) {
    const state = decision.nextState as unknown as Record<string, unknown>;
    db.insert(counters).values({ key, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
  }
  return decision;
}
