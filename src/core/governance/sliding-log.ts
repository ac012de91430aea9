/**
 * An exact sliding-window limit over a bounded log of admission times. The per-agent turn limit uses it: "20 turns
 * a minute" then means at most 20 in ANY 60 s, and the `Retry-After` a refused caller gets is exact and never longer
 * than the window. (A weighted two-window estimate can ask for more than the window, and a fixed window lets 2× the
 * limit through across its edge.) The log never holds more than `limit` entries, so the stored state stays small.
 */

/** What is stored per key: the admission times still inside the window, oldest first. */
export interface SlidingLog {
  stamps: number[];
}

export type SlidingLogDecision =
  | { allowed: true; remaining: number; nextLog: SlidingLog }
  | { allowed: false; code: "rate_limited"; retryAfterMs: number; retryAfterSeconds: number; nextLog: SlidingLog };

/** Reads a stored state; anything that is not a log (an older counter shape, a damaged row) reads as empty. */
export function toSlidingLog(stored: unknown): SlidingLog {
  const stamps = (stored as { stamps?: unknown } | null | undefined)?.stamps;
  return Array.isArray(stamps) && stamps.every((s) => Number.isSafeInteger(s)) ? { stamps: [...(stamps as number[])].sort((a, b) => a - b) } : { stamps: [] };
}

/**
 * Admits one unit at `nowMs` when fewer than `limit` admissions stand in the last `windowMs`. A refused call consumes
 * nothing, so hammering a closed limit does not extend the lock-out. Admissions stamped after `nowMs` (a clock that
 * stepped back) still count, so a skewed clock cannot open a fresh window.
 * @throws RangeError when `limit` or `windowMs` is not a positive integer.
 */
export function consumeSlidingLog(log: SlidingLog, nowMs: number, limit: number, windowMs: number): SlidingLogDecision {
  for (const [name, value] of [["limit", limit], ["windowMs", windowMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const live = log.stamps.filter((stamp) => nowMs - stamp < windowMs);
  if (live.length < limit) {
    const stamps = [...live, nowMs].sort((a, b) => a - b);
    return { allowed: true, remaining: limit - stamps.length, nextLog: { stamps } };
  }
  // The next unit fits once the oldest `live.length − limit + 1` admissions have left the window.
  const freedAt = live[live.length - limit]! + windowMs;
  const retryAfterMs = Math.max(1, freedAt - nowMs);
  return { allowed: false, code: "rate_limited", retryAfterMs, retryAfterSeconds: Math.ceil(retryAfterMs / 1000), nextLog: { stamps: live } };
}
