import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consumeSlidingLog, type SlidingLog, toSlidingLog } from "../../src/core/governance/sliding-log";

const MINUTE = 60_000;

function admitAll(times: number[], limit: number, windowMs = MINUTE): { log: SlidingLog; admitted: number[] } {
  let log: SlidingLog = { stamps: [] };
  const admitted: number[] = [];
  for (const now of times) {
    const decision = consumeSlidingLog(log, now, limit, windowMs);
    log = decision.nextLog;
    if (decision.allowed) admitted.push(now);
  }
  return { log, admitted };
}

describe("sliding log", () => {
  it("blocks the burst across a minute edge that a clock-aligned window would let through", () => {
    const { log } = admitAll(Array.from({ length: 20 }, () => 59_000), 20);
    expect(consumeSlidingLog(log, MINUTE + 1, 20, MINUTE)).toMatchObject({ allowed: false, retryAfterMs: 58_999, retryAfterSeconds: 59 });
    expect(consumeSlidingLog(log, 59_000 + MINUTE, 20, MINUTE)).toMatchObject({ allowed: true, remaining: 19 });
  });

  it("asks a caller refused just after a burst for at most the window", () => {
    const { log } = admitAll(Array.from({ length: 20 }, (_, i) => 120_000 + i), 20);
    const refused = consumeSlidingLog(log, 120_020, 20, MINUTE);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 59_980, retryAfterSeconds: 60 });
  });

  it("reads an older counter shape or a damaged row as an empty log", () => {
    expect(toSlidingLog({ windowStartMs: 0, count: 20, previousCount: 3 })).toEqual({ stamps: [] });
    expect(toSlidingLog({ stamps: [1, "x"] })).toEqual({ stamps: [] });
    expect(toSlidingLog(null)).toEqual({ stamps: [] });
    expect(toSlidingLog({ stamps: [5, 2] })).toEqual({ stamps: [2, 5] });
  });

  it("does not open a fresh window when the clock steps back", () => {
    const { log } = admitAll([200_000, 200_001], 2);
    expect(consumeSlidingLog(log, 100_000, 2, MINUTE).allowed).toBe(false);
  });

  it("rejects invalid configuration naming the field", () => {
    expect(() => consumeSlidingLog({ stamps: [] }, 0, 0, MINUTE)).toThrow(/limit/);
    expect(() => consumeSlidingLog({ stamps: [] }, 0, 1, 0)).toThrow(/windowMs/);
  });
});

describe("sliding log properties", () => {
  const schedule = fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 150 });

  it("never admits more than `limit` in any window-long span, and keeps at most `limit` stamps", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 25 }), schedule, (limit, gaps) => {
        const windowMs = 10_000;
        let now = 0;
        const times = gaps.map((gap) => (now += gap));
        const { log, admitted } = admitAll(times, limit, windowMs);
        expect(log.stamps.length).toBeLessThanOrEqual(limit);
        for (const start of admitted) expect(admitted.filter((t) => t >= start && t < start + windowMs).length).toBeLessThanOrEqual(limit);
      }),
    );
  });

  it("a refused caller that waits exactly Retry-After is admitted, not one ms earlier, and never waits past the window", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 25 }), schedule, (limit, gaps) => {
        const windowMs = 10_000;
        let log: SlidingLog = { stamps: [] };
        let now = 1_000_000;
        for (const gap of gaps) {
          now += gap;
          const decision = consumeSlidingLog(log, now, limit, windowMs);
          log = decision.nextLog;
          if (decision.allowed) continue;
          expect(decision.retryAfterMs).toBeLessThanOrEqual(windowMs);
          expect(decision.retryAfterSeconds).toBe(Math.ceil(decision.retryAfterMs / 1000));
          expect(consumeSlidingLog(log, now + decision.retryAfterMs, limit, windowMs).allowed).toBe(true);
          if (decision.retryAfterMs > 1) expect(consumeSlidingLog(log, now + decision.retryAfterMs - 1, limit, windowMs).allowed).toBe(false);
        }
      }),
    );
  });
});
