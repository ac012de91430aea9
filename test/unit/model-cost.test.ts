import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costMicros } from "../../src/core/governance/model-cost";

describe("model call cost in micro-USD", () => {
  it("is tokens × USD per million tokens, as an integer", () => {
    expect(costMicros({ inputTokens: 1000, outputTokens: 500 }, { inputUsdPerMTok: 0.15, outputUsdPerMTok: 0.6 })).toBe(450);
    expect(costMicros({ inputTokens: 1_000_000, outputTokens: 0 }, { inputUsdPerMTok: 3, outputUsdPerMTok: 15 })).toBe(3_000_000);
    expect(costMicros({ inputTokens: 3, outputTokens: 1 }, { inputUsdPerMTok: 0.1, outputUsdPerMTok: 0.1 })).toBe(0);
  });

  it("is 0 without pricing", () => {
    expect(costMicros({ inputTokens: 99, outputTokens: 99 }, undefined)).toBe(0);
  });

  it("property: a non-negative integer, monotone in tokens", () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.nat(10_000_000), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), (input, output, pin, pout) => {
        const price = { inputUsdPerMTok: pin, outputUsdPerMTok: pout };
        const cost = costMicros({ inputTokens: input, outputTokens: output }, price);
        expect(Number.isInteger(cost) && cost >= 0).toBe(true);
        expect(costMicros({ inputTokens: input + 1, outputTokens: output }, price)).toBeGreaterThanOrEqual(cost);
      }),
    );
  });
});
