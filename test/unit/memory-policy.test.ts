import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MEMORY_LIMITS,
  estimateTokens,
  memoryThreadId,
  planCompaction,
  planCondensation,
  selectHotWindow,
  truncateToTokens,
  utf8ByteLength,
  validateMemoryLimits,
  type MemoryLimits,
  type MemoryMessage,
  type MessageTokenRef,
  type SummaryRef,
} from "../../src/core/memory/memory-policy";

const limits: MemoryLimits = { ...DEFAULT_MEMORY_LIMITS, hotMaxMessages: 10, hotMaxTokens: 1_000, compactionMaxSpanMessages: 6 };

function message(seq: number, text = `message ${seq}`): MemoryMessage {
  return { id: `m${seq}`, seq, threadId: "a:session:s", kind: "user", text };
}

function refs(count: number, tokens = 10, fromSeq = 1): MessageTokenRef[] {
  return Array.from({ length: count }, (_, i) => ({ id: `m${fromSeq + i}`, seq: fromSeq + i, tokens }));
}

function summary(seq: number, depth = 0): SummaryRef {
  return {
    messageId: `s${seq}`,
    seq,
    threadId: "a:session:s",
    summaryDepth: depth,
    startMessageId: `m${seq * 10}`,
    endMessageId: `m${seq * 10 + 9}`,
    coveredFromSeq: seq * 10,
    coveredThroughSeq: seq * 10 + 9,
    text: `summary ${seq}`,
  };
}

describe("token estimator", () => {
  it("is ceil(utf8 bytes / 4) plus a fixed per-item overhead of 4", () => {
    expect(estimateTokens("")).toBe(4);
    expect(estimateTokens("abcd")).toBe(5);
    expect(estimateTokens("abcde")).toBe(6);
    expect(estimateTokens("日本")).toBe(6); // 6 bytes: CJK is not underestimated as 2 chars would be
    expect(estimateTokens("😀")).toBe(5);
  });

  it("counts UTF-8 bytes exactly like Buffer does, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.string({ unit: "grapheme", maxLength: 1 }), fc.constantFrom("\uD800", "\uDFFF", "😀")), maxLength: 200 }), (text) => {
        expect(utf8ByteLength(text)).toBe(Buffer.byteLength(text, "utf8"));
      }),
    );
  });

  it("counts long texts (past the encoder's scratch bound: the code-unit loop) and texts near it exactly like Buffer does", () => {
    const unit = "a\u00e9\u6f22\ud83c\udfc3\ud800b\udfff";
    for (const length of [1, 3 * 1024, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 100_000]) {
      const text = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
      expect(utf8ByteLength(text), `length ${length}`).toBe(Buffer.byteLength(text, "utf8"));
    }
  });

  it("truncation always fits the allowance, keeps a prefix and leaves fitting text alone", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.integer({ min: 0, max: 120 }), (text, max) => {
        const cut = truncateToTokens(text, max);
        if (estimateTokens(text) <= max) expect(cut).toBe(text);
        if (cut === null) return;
        expect(estimateTokens(cut)).toBeLessThanOrEqual(max);
        if (cut !== text) {
          expect(cut.endsWith("…")).toBe(true);
          expect(text.startsWith(cut.slice(0, -1))).toBe(true);
        }
      }),
    );
  });

  it("never splits a surrogate pair", () => {
    const cut = truncateToTokens("😀".repeat(50), 8);
    expect(cut).not.toBeNull();
    expect(Buffer.from(cut!, "utf8").toString("utf8")).toBe(cut);
    expect(cut).toMatch(/^(😀)+…$/u);
  });
});

describe("selectHotWindow", () => {
  it("returns the newest messages in chronological order, bounded by count", () => {
    const newestFirst = Array.from({ length: 15 }, (_, i) => message(15 - i));
    const window = selectHotWindow(newestFirst, limits);
    expect(window.messages.map((m) => m.seq)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(window.stoppedBy).toBe("count");
  });

  it("stops at the first message that would break the token bound instead of skipping it", () => {
    const newestFirst = [message(3, "short"), message(2, "x".repeat(4_000)), message(1, "short")];
    const window = selectHotWindow(newestFirst, limits);
    expect(window.messages.map((m) => m.seq)).toEqual([3]);
    expect(window.stoppedBy).toBe("tokens");
  });

  it("is always a contiguous newest suffix within both bounds", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 2_000 }),
        (texts, hotMaxMessages, hotMaxTokens) => {
          const newestFirst = texts.map((text, i) => message(texts.length - i, text));
          const window = selectHotWindow(newestFirst, { hotMaxMessages, hotMaxTokens });
          expect(window.messages.length).toBeLessThanOrEqual(hotMaxMessages);
          expect(window.tokens).toBeLessThanOrEqual(hotMaxTokens);
          expect(window.tokens).toBe(window.messages.reduce((sum, m) => sum + estimateTokens(m.text), 0));
          expect(window.messages).toEqual(newestFirst.slice(0, window.messages.length).reverse());
        },
      ),
    );
  });
});

describe("planCompaction (hot → warm)", () => {
  const stats = (count: number, tokensEach = 10) => ({
    agentId: "a",
    threadId: "a:session:s",
    oldestUncompacted: refs(Math.min(count, limits.compactionMaxSpanMessages), tokensEach),
    uncompactedCount: count,
    uncompactedTokens: count * tokensEach,
  });

  it("does nothing while the hot tier is within its limits", () => {
    expect(planCompaction(stats(10), limits)).toEqual({ action: "none", reason: "within_limits" });
  });

  it("summarizes the oldest span that brings the count back to the target ratio", () => {
    const plan = planCompaction(stats(11), limits);
    // target = floor(10 × 0.75) = 7 → 4 oldest messages go
    expect(plan).toMatchObject({ action: "compact", trigger: "count", itemCount: 4 });
    if (plan.action !== "compact") throw new Error("expected a plan");
    expect(plan.span).toMatchObject({ agentId: "a", threadId: "a:session:s", startMessageId: "m1", endMessageId: "m4", summaryDepth: 0, startSeq: 1, endSeq: 4 });
  });

  it("triggers on tokens alone and caps the span at compactionMaxSpanMessages", () => {
    const plan = planCompaction(stats(8, 400), limits);
    expect(plan).toMatchObject({ action: "compact", trigger: "tokens", itemCount: 6, tokens: 2_400 });
  });

  it("never summarizes the newest raw message", () => {
    const plan = planCompaction({ agentId: "a", threadId: "t", oldestUncompacted: refs(1, 5_000), uncompactedCount: 1, uncompactedTokens: 5_000 }, limits);
    expect(plan).toEqual({ action: "none", reason: "nothing_to_compact" });
  });

  it("plans a prefix of the oldest rows that respects every cap", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 40 }), (tokenList) => {
        const all = tokenList.map((tokens, i) => ({ id: `m${i + 1}`, seq: i + 1, tokens }));
        const input = {
          agentId: "a",
          threadId: "t",
          oldestUncompacted: all.slice(0, limits.compactionMaxSpanMessages),
          uncompactedCount: all.length,
          uncompactedTokens: tokenList.reduce((a, b) => a + b, 0),
        };
        const plan = planCompaction(input, limits);
        expect(planCompaction(input, limits)).toEqual(plan);
        const over = input.uncompactedCount > limits.hotMaxMessages || input.uncompactedTokens > limits.hotMaxTokens;
        if (plan.action === "none") {
          expect(!over || all.length === 1).toBe(true);
          return;
        }
        expect(over).toBe(true);
        expect(plan.span.startMessageId).toBe("m1");
        expect(plan.span.endMessageId).toBe(`m${plan.itemCount}`);
        expect(plan.itemCount).toBeLessThanOrEqual(Math.min(limits.compactionMaxSpanMessages, all.length - 1));
        const remainingCount = all.length - plan.itemCount;
        const remainingTokens = input.uncompactedTokens - plan.tokens;
        const atTarget = remainingCount <= 7 && remainingTokens <= 750;
        const capped = plan.itemCount === Math.min(limits.compactionMaxSpanMessages, all.length - 1);
        expect(atTarget || capped).toBe(true);
        // minimal: one message fewer would not have reached the target
        if (atTarget && plan.itemCount > 1) {
          const prev = all[plan.itemCount - 1]!.tokens;
          expect(remainingCount + 1 <= 7 && remainingTokens + prev <= 750).toBe(false);
        }
      }),
    );
  });
});

describe("planCondensation (warm → cold)", () => {
  it("condenses the oldest batch one depth up on the agent's memory thread once a depth overflows", () => {
    const batch = [1, 2, 3, 4].map((seq) => summary(seq));
    const plan = planCondensation({ agentId: "a", summaryDepth: 0, oldestUncondensed: batch, uncondensedCount: 9 }, DEFAULT_MEMORY_LIMITS);
    expect(plan).toMatchObject({
      action: "compact",
      itemCount: 4,
      span: { threadId: memoryThreadId("a"), summaryDepth: 1, startMessageId: "s1", endMessageId: "s4", coveredFromSeq: 10, coveredThroughSeq: 49 },
    });
  });

  it("waits until the depth holds more than maxSummariesPerDepth summaries", () => {
    const plan = planCondensation({ agentId: "a", summaryDepth: 0, oldestUncondensed: [summary(1), summary(2)], uncondensedCount: 8 }, DEFAULT_MEMORY_LIMITS);
    expect(plan).toEqual({ action: "none", reason: "within_limits" });
  });

  it("stops at maxSummaryDepth and never condenses a single summary", () => {
    expect(planCondensation({ agentId: "a", summaryDepth: 3, oldestUncondensed: [summary(1, 3), summary(2, 3)], uncondensedCount: 99 }, DEFAULT_MEMORY_LIMITS)).toEqual({
      action: "none",
      reason: "depth_cap",
    });
    expect(planCondensation({ agentId: "a", summaryDepth: 1, oldestUncondensed: [summary(1, 1)], uncondensedCount: 99 }, DEFAULT_MEMORY_LIMITS)).toEqual({
      action: "none",
      reason: "nothing_to_compact",
    });
  });
});

describe("validateMemoryLimits", () => {
  it("accepts the defaults and names the failing field otherwise", () => {
    expect(validateMemoryLimits(DEFAULT_MEMORY_LIMITS).ok).toBe(true);
    expect(validateMemoryLimits({ ...DEFAULT_MEMORY_LIMITS, hotMaxTokens: 0 })).toMatchObject({ ok: false, field: "hotMaxTokens" });
    expect(validateMemoryLimits({ ...DEFAULT_MEMORY_LIMITS, condenseBatchSize: 1 })).toMatchObject({ ok: false, field: "condenseBatchSize" });
    expect(validateMemoryLimits({ ...DEFAULT_MEMORY_LIMITS, compactionTargetRatio: 1.5 })).toMatchObject({ ok: false, field: "compactionTargetRatio" });
  });
});
