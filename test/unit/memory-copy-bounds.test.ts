import { describe, expect, it } from "vitest";
import { MAX_KEPT_PAGE_CHARS, MAX_KEPT_PAGES, MemoryCopy } from "../../src/objects/agent/rows/memory-copy";

const row = (seq: number, text: string) => [seq, `m-${seq}`, "t", "user", text, null, null, null, null, "{}", "2026-01-01T00:00:00.000Z"];

/** Issue 12 §8 (session 12): the memory copy's pages are bounded per agent, by count and by kept text. */
describe("memory copy bounds", () => {
  it("keeps at most MAX_KEPT_PAGES pages, least recently used out first", () => {
    const copy = new MemoryCopy();
    for (let i = 0; i < MAX_KEPT_PAGES; i++) copy.keepPage(`t-${i}`, 40, [row(i, "x")]);
    // A use makes t-0 the most recent: t-1 goes when one more is kept.
    expect(copy.page("t-0", 40)).toBeDefined();
    copy.keepPage("t-new", 40, [row(99, "x")]);
    expect(copy.page("t-1", 40)).toBeUndefined();
    expect(copy.page("t-0", 40)).toBeDefined();
    expect(copy.page("t-new", 40)).toBeDefined();
    // Another limit is another statement: not this page.
    expect(copy.page("t-new", 5)).toBeUndefined();
  });

  it("keeps at most MAX_KEPT_PAGE_CHARS of text: a page alone over it is not kept, appends count and trimmed rows free", () => {
    const copy = new MemoryCopy();
    copy.keepPage("big", 40, [row(1, "x".repeat(MAX_KEPT_PAGE_CHARS))]);
    expect(copy.page("big", 40)).toBeUndefined();
    const half = "y".repeat(MAX_KEPT_PAGE_CHARS / 2 - 10);
    copy.keepPage("a", 2, [row(1, half)]);
    copy.keepPage("b", 2, [row(2, "small")]);
    expect(copy.page("a", 2)).toBeDefined();
    // b grows by half the budget: a (least recently used after this use of b) goes.
    expect(copy.page("b", 2)).toBeDefined();
    copy.appended("b", "user", row(3, half), 0);
    expect(copy.page("a", 2)).toBeUndefined();
    expect(copy.page("b", 2)?.map((r) => r[0])).toEqual([3, 2]);
    // Past its limit the oldest rows leave the page and their text the count: another half fits again.
    copy.appended("b", "user", row(4, "z"), 0);
    copy.appended("b", "user", row(5, "z"), 0);
    expect(copy.page("b", 2)?.map((r) => r[0])).toEqual([5, 4]);
    copy.keepPage("c", 2, [row(6, half)]);
    expect(copy.page("b", 2)).toBeDefined();
    expect(copy.page("c", 2)).toBeDefined();
  });
});
