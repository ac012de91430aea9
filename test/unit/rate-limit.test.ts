import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  consumeRateLimit,
  DEFAULT_RATE_LIMITS,
  emptyRateLimitState,
  rateLimitKeys,
  type RateLimitState,
} from "../../src/core/governance/rate-limit";

const MINUTE = 60_000;

function burst(n: number, nowMs: number, limit: number, windowMs: number) {
  let state: RateLimitState | null = null;
  const results = [];
  for (let i = 0; i < n; i++) {
    const decision = consumeRateLimit(state, nowMs, limit, windowMs);
    state = decision.nextState;
    results.push(decision);
  }
  return { results, state: state! };
}

describe("defaults (seed 003 §11.2)", () => {
  it("are 100 req/min per client, 20 turns/min per agent, 60 calls/min per agent per tool", () => {
    expect(DEFAULT_RATE_LIMITS.apiPerClient).toEqual({ limit: 100, windowMs: MINUTE, onExceeded: "fail" });
    expect(DEFAULT_RATE_LIMITS.turnsPerAgent).toEqual({ limit: 20, windowMs: MINUTE, onExceeded: "delay" });
    expect(DEFAULT_RATE_LIMITS.toolCallsPerAgentTool).toEqual({ limit: 60, windowMs: MINUTE, onExceeded: "delay" });
  });

  it("keys follow the seed's key strategy", () => {
    expect(rateLimitKeys.client("k1")).toBe("client:k1:api");
    expect(rateLimitKeys.agentTurns("a1")).toBe("agent:a1:turns");
    expect(rateLimitKeys.agentTool("a1", "create_task")).toBe("agent:a1:tool:create_task");
  });
});

describe("fixed window", () => {
  it("allows exactly the 100th request and answers the 101st with 429 and Retry-After", () => {
    const now = 10 * MINUTE + 15_000;
    const { results } = burst(101, now, 100, MINUTE);
    expect(results.slice(0, 100).every((r) => r.allowed)).toBe(true);
    expect(results[99]).toMatchObject({ allowed: true, remaining: 0 });
    expect(results[100]).toMatchObject({ allowed: false, code: "rate_limited", retryAfterMs: 45_000, retryAfterSeconds: 45 });
  });

  it("does not count denied requests against the next window", () => {
    const { state } = burst(150, 0, 20, MINUTE);
    expect(state.count).toBe(20);
    const next = consumeRateLimit(state, MINUTE, 20, MINUTE);
    expect(next).toMatchObject({ allowed: true, remaining: 19 });
  });

  it("rounds Retry-After up to whole seconds and never below 1", () => {
    const { state } = burst(1, 0, 1, MINUTE);
    expect(consumeRateLimit(state, MINUTE - 1, 1, MINUTE)).toMatchObject({ retryAfterMs: 1, retryAfterSeconds: 1 });
    expect(consumeRateLimit(state, 1_500, 1, MINUTE)).toMatchObject({ retryAfterMs: 58_500, retryAfterSeconds: 59 });
  });

  it("does not reset the counter when the clock steps backwards", () => {
    const { state } = burst(5, 2 * MINUTE + 10, 5, MINUTE);
    expect(consumeRateLimit(state, MINUTE + 10, 5, MINUTE).allowed).toBe(false);
  });

  it("honours a cost larger than one", () => {
    const first = consumeRateLimit(null, 0, 10, MINUTE, { cost: 7 });
    expect(first).toMatchObject({ allowed: true, remaining: 3 });
    expect(consumeRateLimit(first.nextState, 1, 10, MINUTE, { cost: 4 }).allowed).toBe(false);
  });

  it("rejects invalid configuration naming the field", () => {
    expect(() => consumeRateLimit(null, 0, 0, MINUTE)).toThrow(/limit/);
    expect(() => consumeRateLimit(null, 0, 10, 0)).toThrow(/windowMs/);
    expect(() => consumeRateLimit(null, 0, 10, MINUTE, { cost: 11 })).toThrow(/cost/);
  });
});

describe("properties", () => {
  it("never admits more than `limit` in any aligned window", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }),
        (limit, gaps) => {
          const windowMs = 10_000;
          let state = emptyRateLimitState();
          let now = 0;
          const admitted = new Map<number, number>();
          for (const gap of gaps) {
            now += gap;
            const d = consumeRateLimit(state, now, limit, windowMs);
            state = d.nextState;
            if (d.allowed) {
              const w = Math.floor(now / windowMs);
              admitted.set(w, (admitted.get(w) ?? 0) + 1);
            }
          }
          for (const count of admitted.values()) expect(count).toBeLessThanOrEqual(limit);
        },
      ),
    );
  });

  it("a denied caller that waits exactly retryAfterMs is admitted, and not one ms earlier", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 120 }),
        (limit, costSeed, gaps) => {
          const windowMs = 10_000;
          const cost = Math.min(costSeed, limit);
          let state = emptyRateLimitState();
          let now = 1_000_000;
          for (const gap of gaps) {
            now += gap;
            const d = consumeRateLimit(state, now, limit, windowMs, { cost });
            state = d.nextState;
            if (!d.allowed) {
              expect(consumeRateLimit(state, now + d.retryAfterMs, limit, windowMs, { cost }).allowed).toBe(true);
              if (d.retryAfterMs > 1) {
                expect(consumeRateLimit(state, now + d.retryAfterMs - 1, limit, windowMs, { cost }).allowed).toBe(false);
              }
              expect(d.retryAfterSeconds).toBe(Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
            }
          }
        },
      ),
    );
  });
});
