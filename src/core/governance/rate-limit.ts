/**
 * Rate limiting as a pure function over a stored counter (seed 003 §11.2 "RateLimiter configuration").
 * The caller owns persistence: load the state for a key, call {@link consumeRateLimit}, store `nextState`.
 * Windows are aligned to multiples of `windowMs` since the epoch, so every replica computes the same window.
 */

/** What is stored per key. (The per-agent turn limit is an exact sliding window instead: `./sliding-log`.) */
export interface RateLimitState {
  windowStartMs: number;
  count: number;
}

export interface RateLimitOptions {
  /** Units this request consumes; default 1. */
  cost?: number;
}

export type RateLimitDecision =
  | { allowed: true; remaining: number; retryAfterSeconds: 0; retryAfterMs: 0; nextState: RateLimitState }
  | {
      allowed: false;
      code: "rate_limited";
      remaining: 0;
      /** For the `Retry-After` header: whole seconds, at least 1. */
      retryAfterSeconds: number;
      /** Exact wait for internal backpressure ("delay" rather than "fail"). */
      retryAfterMs: number;
      nextState: RateLimitState;
    };

/** What a limited caller does when the limit is hit (seed 003 §11.2 "On exceeded"). */
export type OnExceeded = "fail" | "delay";

export interface RateLimitRule {
  limit: number;
  windowMs: number;
  onExceeded: OnExceeded;
}

/** Seed 003 §11.2 default limits: 100/min per client, 20 turns/min per agent, 60 calls/min per agent per tool. */
export const DEFAULT_RATE_LIMITS = {
  apiPerClient: { limit: 100, windowMs: 60_000, onExceeded: "fail" },
  turnsPerAgent: { limit: 20, windowMs: 60_000, onExceeded: "delay" },
  toolCallsPerAgentTool: { limit: 60, windowMs: 60_000, onExceeded: "delay" },
} as const satisfies Record<string, RateLimitRule>;

/** Seed 003 §11.2 key strategy; one stored counter per key. */
export const rateLimitKeys = {
  client: (clientId: string) => `client:${clientId}:api`,
  agentTurns: (agentId: string) => `agent:${agentId}:turns`,
  agentTool: (agentId: string, toolName: string) => `agent:${agentId}:tool:${toolName}`,
} as const;

/** A counter that has never been used. */
export function emptyRateLimitState(): RateLimitState {
  return { windowStartMs: 0, count: 0 };
}

function assertPositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

/** Rolls the stored counter forward to the window containing `nowMs`. */
function rollTo(state: RateLimitState, nowMs: number, windowMs: number): RateLimitState {
  const windowStartMs = Math.floor(nowMs / windowMs) * windowMs;
  // A clock that steps backwards must not reset the counter, or a skewed replica could grant a fresh window.
  if (windowStartMs <= state.windowStartMs) return state;
  return { windowStartMs, count: 0 };
}

/**
 * Tries to consume `cost` units for one key. A denied request consumes nothing, so a client
 * hammering a closed limit does not extend its own lock-out.
 * @throws RangeError when `limit`, `windowMs` or `cost` is not a positive integer, or `cost > limit`.
 */
export function consumeRateLimit(
  state: RateLimitState | null | undefined,
  nowMs: number,
  limit: number,
  windowMs: number,
  options: RateLimitOptions = {},
): RateLimitDecision {
  const cost = options.cost ?? 1;
  assertPositiveInteger("limit", limit);
  assertPositiveInteger("windowMs", windowMs);
  assertPositiveInteger("cost", cost);
  if (cost > limit) throw new RangeError(`cost must be <= limit (${cost} > ${limit})`);

  const s = rollTo(state ?? emptyRateLimitState(), nowMs, windowMs);
  const elapsed = Math.max(0, nowMs - s.windowStartMs);

  if (s.count + cost <= limit) {
    const next = { ...s, count: s.count + cost };
    return { allowed: true, remaining: limit - next.count, retryAfterSeconds: 0, retryAfterMs: 0, nextState: next };
  }
  return denied(windowMs - elapsed, s);
}

function denied(waitMs: number, nextState: RateLimitState): RateLimitDecision {
  const retryAfterMs = Math.max(1, waitMs);
  return {
    allowed: false,
    code: "rate_limited",
    remaining: 0,
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    retryAfterMs,
    nextState,
  };
}
