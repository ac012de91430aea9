import { eq } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { consumeSlidingLog, type SlidingLogDecision, toSlidingLog } from "../../core/governance/sliding-log";
import { counters } from "../../db/common-schema";

/**
 * Loads, decides (core) and stores one sliding-window limit inside the calling DO. Exact over any window: a fixed
 * window aligned to the clock lets a burst of 2× the limit through across its edge ("20 turns a minute" would allow 40).
 */
export function consumeCounter(
  db: BaseSQLiteDatabase<"sync", unknown, Record<string, unknown>>,
  key: string,
  limit: number,
  windowMs: number,
  nowMs: number = Date.now(),
): SlidingLogDecision {
  const row = db.select().from(counters).where(eq(counters.key, key)).get();
  const decision = consumeSlidingLog(toSlidingLog(row?.state), nowMs, limit, windowMs);
  if (decision.allowed) {
    const state = decision.nextLog as unknown as Record<string, unknown>;
    db.insert(counters).values({ key, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
  }
  return decision;
}
