import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleContext, DEFAULT_CONTEXT_BUDGET, type ContextBudget, type ContextInputs } from "../../src/core/memory/context-assembly";
import { estimateTokens, type MemoryMessage, type SummaryRef } from "../../src/core/memory/memory-policy";
import { buildReport, type AgentReport } from "../../src/core/memory/reports";
import { applySlotUpdate, emptySlots, type AgentSlots } from "../../src/core/memory/slots";

function message(seq: number, text = `message ${seq}`): MemoryMessage {
  return { id: `m${seq}`, seq, threadId: "a:session:s", kind: seq % 2 ? "user" : "assistant", text };
}

function summary(seq: number, depth: number, text = `summary ${seq}`): SummaryRef {
  return {
    messageId: `s${seq}`,
    seq,
    threadId: depth > 0 ? "a:memory" : "a:session:s",
    summaryDepth: depth,
    startMessageId: `m${seq}`,
    endMessageId: `m${seq + 1}`,
    coveredFromSeq: seq,
    coveredThroughSeq: seq + 1,
    text,
  };
}

const goalSlots: AgentSlots = (() => {
  const result = applySlotUpdate(emptySlots(), "primaryGoal", "Run a marathon");
  if (!result.ok) throw new Error(result.code);
  return result.slots;
})();

const currentReport: AgentReport = (() => {
  const result = buildReport("a", { scope: "current", content: { text: "On plan." } }, 0);
  if (!result.ok) throw new Error("invalid report");
  return result.report;
})();

const newestFirst = (count: number, text?: (seq: number) => string) =>
  Array.from({ length: count }, (_, i) => message(count - i, text?.(count - i)));

const inputs = (overrides: Partial<ContextInputs> = {}): ContextInputs => ({
  slots: goalSlots,
  report: { report: currentReport, fresh: true },
  coldSummaries: [summary(2, 1)],
  warmSummaries: [summary(30, 0), summary(20, 0)],
  hotMessages: newestFirst(5, (seq) => `turn ${seq}`).map((m) => ({ ...m, seq: m.seq + 100, id: `m${m.seq + 100}` })),
  ...overrides,
});

describe("assembleContext", () => {
  it("orders slots, report, cold, warm, then hot, each tier oldest first", () => {
    const context = assembleContext(inputs());
    expect(context.items.map((item) => (item.kind === "message" ? item.messageId : item.kind === "summary" ? item.messageId : item.kind))).toEqual([
      "slots",
      "report",
      "s2",
      "s20",
      "s30",
      "m101",
      "m102",
      "m103",
      "m104",
      "m105",
    ]);
    expect(context.items[0]).toMatchObject({ kind: "slots", text: "primaryGoal: Run a marathon" });
    expect(context.items[2]).toMatchObject({ kind: "summary", tier: "cold", summaryDepth: 1 });
    expect(context.omitted).toEqual({ slots: false, report: false, cold: 0, warm: 0, hot: 0 });
  });

  it("marks a stale report", () => {
    const context = assembleContext(inputs({ report: { report: currentReport, fresh: false } }));
    expect(context.items[1]).toMatchObject({ kind: "report", fresh: false, text: "[stale] [current report] On plan." });
  });

  it("truncates an oversized newest message to fit instead of dropping the turn", () => {
    const huge = message(9, "word ".repeat(20_000));
    const context = assembleContext(inputs({ hotMessages: [huge, message(8)] }), { ...DEFAULT_CONTEXT_BUDGET, maxTokens: 500 });
    const hot = context.items.filter((item) => item.kind === "message");
    expect(hot).toHaveLength(1);
    expect(hot[0]).toMatchObject({ messageId: "m9", truncated: true });
    expect(context.tokens).toBeLessThanOrEqual(500);
  });

  it("gives the conversation priority over summaries, dropping cold and warm first", () => {
    const hot = newestFirst(30, () => "x".repeat(200));
    const full = assembleContext(inputs({ hotMessages: hot }));
    const pinned = full.items.filter((item) => item.kind === "slots" || item.kind === "report" || item.kind === "message");
    const maxTokens = pinned.reduce((sum, item) => sum + item.tokens, 0);
    const tight = assembleContext(inputs({ hotMessages: hot }), { ...DEFAULT_CONTEXT_BUDGET, maxTokens });
    expect(tight.items).toEqual(pinned);
    expect(tight.omitted).toEqual({ slots: false, report: false, cold: 1, warm: 2, hot: 0 });
    const tighter = assembleContext(inputs({ hotMessages: hot }), { ...DEFAULT_CONTEXT_BUDGET, maxTokens: maxTokens - 1 });
    expect(tighter.omitted.hot).toBe(1);
    expect(tighter.items.find((item) => item.kind === "message")).toMatchObject({ seq: 2 });
  });

  it("lists a summary passed in both tiers only once, as cold", () => {
    const shared = summary(7, 1);
    const context = assembleContext(inputs({ coldSummaries: [shared], warmSummaries: [shared] }));
    expect(context.items.filter((item) => item.kind === "summary")).toEqual([expect.objectContaining({ messageId: "s7", tier: "cold" })]);
  });

  it("reads only the first maxHotMessages of the hot input, so history length does not matter", () => {
    const budget: ContextBudget = { ...DEFAULT_CONTEXT_BUDGET, maxHotMessages: 20 };
    const long = newestFirst(100_000);
    expect(assembleContext(inputs({ hotMessages: long }), budget)).toEqual(assembleContext(inputs({ hotMessages: long.slice(0, 20) }), budget));
  });

  it("stays within the token budget whatever the input size, counting every item's estimate", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 2_000 });
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 80 }),
        fc.array(text, { maxLength: 12 }),
        fc.array(text, { maxLength: 6 }),
        fc.option(text, { nil: null }),
        fc.integer({ min: 0, max: 3_000 }),
        (hotTexts, warmTexts, coldTexts, goal, maxTokens) => {
          const slots = goal?.trim() ? applySlotUpdate(emptySlots(), "primaryGoal", goal.slice(0, 1_000)) : null;
          const context = assembleContext(
            {
              slots: slots?.ok ? slots.slots : null,
              report: { report: currentReport, fresh: true },
              coldSummaries: coldTexts.map((t, i) => summary(1_000 - i, 1, t)),
              warmSummaries: warmTexts.map((t, i) => summary(2_000 - i, 0, t)),
              hotMessages: hotTexts.map((t, i) => message(10_000 - i, t)),
            },
            { ...DEFAULT_CONTEXT_BUDGET, maxTokens },
          );
          expect(context.tokens).toBeLessThanOrEqual(maxTokens);
          expect(context.tokens).toBe(context.items.reduce((sum, item) => sum + estimateTokens(item.text), 0));
          const hotSeqs = context.items.flatMap((item) => (item.kind === "message" ? [item.seq] : []));
          expect(hotSeqs).toEqual(Array.from({ length: hotSeqs.length }, (_, i) => 10_000 - hotSeqs.length + 1 + i));
        },
      ),
    );
  });

  it("renders the same context for any order of the same bounded inputs", () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(newestFirst(10), { minLength: 10, maxLength: 10 }), (shuffled) => {
        expect(assembleContext(inputs({ hotMessages: shuffled }))).toEqual(assembleContext(inputs({ hotMessages: newestFirst(10) })));
      }),
    );
  });
});
