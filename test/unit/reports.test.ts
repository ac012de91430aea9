import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, H } from "../../src/core/ids/hash";
import {
  buildReport,
  compareCursors,
  DEFAULT_REPORT_MAX_AGE_MS,
  publishReport,
  renderReport,
  REPORT_SCOPES,
  reportFreshness,
  reportHeadId,
  reportId,
  type AgentReport,
  type AgentReportHead,
} from "../../src/core/memory/reports";
import { sha256Hex } from "../../src/core/ids/sha256";

const HOUR = 3_600_000;

function report(draft: Record<string, unknown>, now = 0): AgentReport {
  const result = buildReport("agent-1", { scope: "current", content: { text: "All on track." }, ...draft }, now);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.report;
}

function headFor(r: AgentReport, updatedAt: number): AgentReportHead {
  return { id: reportHeadId(r.agentId, r.scope), agentId: r.agentId, scope: r.scope, reportId: r.id, updatedAt };
}

describe("report identity", () => {
  it("derives the id from agent, scope, period and the canonical body, never from the clock", () => {
    const r = report({ sourceCursor: { journal: 7 } }, 1_000);
    const body = { content: { text: "All on track." }, confidence: null, provenance: {}, sourceCursor: { journal: 7 } };
    expect(r.id).toBe(H("agent-1", "current", "", sha256Hex(canonicalJson(body))));
    expect(report({ sourceCursor: { journal: 7 } }, 99_999).id).toBe(r.id);
  });

  it("is independent of key order and separates every identifying field", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }), (content) => {
        const reversed = Object.fromEntries(Object.entries(content).reverse());
        expect(report({ content: reversed }).id).toBe(report({ content }).id);
      }),
    );
    const base = report({});
    expect(report({ scope: "daily" }).id).not.toBe(base.id);
    expect(report({ periodKey: "2026-05-01" }).id).not.toBe(base.id);
    expect(report({ sourceCursor: { journal: 1 } }).id).not.toBe(base.id);
    expect(report({ content: { text: "Behind." } }).id).not.toBe(base.id);
    expect(reportId("agent-2", { scope: "current", periodKey: "", content: { text: "All on track." }, confidence: null, provenance: {}, sourceCursor: {} })).not.toBe(base.id);
  });

  it("rejects malformed drafts with the failing fields", () => {
    const result = buildReport("agent-1", { scope: "yearly", content: {}, confidence: 2 }, 0);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((issue) => issue.path).sort()).toEqual(["confidence", "scope"]);
  });
});

describe("publishReport", () => {
  it("creates the head, re-confirms on an identical publish and moves to a newer report", () => {
    const first = report({ sourceCursor: { journal: 1 } });
    const created = publishReport(null, null, first, 10);
    expect(created).toEqual({ action: "create", head: headFor(first, 10) });
    expect(publishReport(headFor(first, 10), first, first, 20)).toEqual({ action: "confirm", head: headFor(first, 20) });
    const second = report({ sourceCursor: { journal: 2 } });
    expect(publishReport(headFor(first, 10), first, second, 30)).toEqual({ action: "update", head: headFor(second, 30) });
  });

  it("never moves a head back to a report built from older sources", () => {
    const newer = report({ sourceCursor: { journal: 5 } });
    const older = report({ sourceCursor: { journal: 4 }, content: { text: "old" } });
    expect(publishReport(headFor(newer, 10), newer, older, 20)).toEqual({ action: "rejected", code: "report_older_than_head" });
    const concurrent = report({ sourceCursor: { journal: 4, webhook: 9 } });
    expect(publishReport(headFor(newer, 10), newer, concurrent, 20).action).toBe("update");
  });

  it("refuses a report of another scope", () => {
    const daily = report({ scope: "daily" });
    expect(publishReport(headFor(report({}), 0), null, daily, 1)).toEqual({ action: "rejected", code: "scope_mismatch" });
  });
});

describe("reportFreshness", () => {
  const r = report({ sourceCursor: { journal: 10, webhook: 3 } });

  it("is fresh within the scope's max age when no newer source events were processed", () => {
    expect(reportFreshness(headFor(r, 0), r, DEFAULT_REPORT_MAX_AGE_MS.current, { journal: 10, webhook: 3 })).toEqual({
      fresh: true,
      reasons: [],
      ageMs: DEFAULT_REPORT_MAX_AGE_MS.current,
    });
  });

  it("goes stale by time one millisecond past the max age of its scope", () => {
    for (const scope of REPORT_SCOPES) {
      const scoped = report({ scope, sourceCursor: {} });
      const max = DEFAULT_REPORT_MAX_AGE_MS[scope];
      expect(reportFreshness(headFor(scoped, 0), scoped, max, {}).fresh).toBe(true);
      expect(reportFreshness(headFor(scoped, 0), scoped, max + 1, {})).toEqual({
        fresh: false,
        reasons: [{ code: "max_age_exceeded", ageMs: max + 1, maxAgeMs: max }],
        ageMs: max + 1,
      });
    }
  });

  it("goes stale by events when the processed cursor is ahead on any source", () => {
    expect(reportFreshness(headFor(r, 0), r, HOUR, { journal: 11, webhook: 3, timer: 1 })).toEqual({
      fresh: false,
      reasons: [{ code: "source_cursor_behind", sources: ["journal", "timer"] }],
      ageMs: HOUR,
    });
    expect(reportFreshness(headFor(r, 0), r, HOUR, { journal: 9 }).fresh).toBe(true);
  });

  it("reports both triggers when both hold", () => {
    const result = reportFreshness(headFor(r, 0), r, 30 * 24 * HOUR, { webhook: 4 });
    expect(result.reasons.map((reason) => reason.code)).toEqual(["max_age_exceeded", "source_cursor_behind"]);
  });

  it("ages from the last confirmation and treats a clock step back as age 0", () => {
    expect(reportFreshness(headFor(r, 50 * HOUR), r, 60 * HOUR, {}).fresh).toBe(true);
    expect(reportFreshness(headFor(r, 10 * HOUR), r, 5 * HOUR, {})).toEqual({ fresh: true, reasons: [], ageMs: 0 });
  });

  it("is stale without a report, or when the report is not the head's", () => {
    expect(reportFreshness(null, null, 0, {})).toEqual({ fresh: false, reasons: [{ code: "no_report" }], ageMs: null });
    const other = report({ content: { text: "other" } });
    expect(reportFreshness(headFor(r, 0), other, 0, {}).reasons).toEqual([{ code: "head_mismatch", headReportId: r.id, reportId: other.id }]);
  });

  it("once stale by time, stays stale as time passes", () => {
    fc.assert(
      fc.property(fc.constantFrom(...REPORT_SCOPES), fc.nat(2 ** 40), fc.nat(2 ** 40), (scope, t1, dt) => {
        const scoped = report({ scope });
        const head = headFor(scoped, 0);
        if (!reportFreshness(head, scoped, t1, {}).fresh) expect(reportFreshness(head, scoped, t1 + dt, {}).fresh).toBe(false);
      }),
    );
  });
});

describe("cursors and rendering", () => {
  it("orders cursors partially, a missing source counting as 0", () => {
    expect(compareCursors({ a: 1 }, { a: 1, b: 0 })).toBe("equal");
    expect(compareCursors({ a: 1 }, { a: 2 })).toBe("before");
    expect(compareCursors({ a: 2 }, {})).toBe("after");
    expect(compareCursors({ a: 2 }, { b: 1 })).toBe("concurrent");
  });

  it("renders content.text when present, canonical JSON otherwise", () => {
    expect(renderReport(report({}))).toBe("[current report] All on track.");
    expect(renderReport(report({ scope: "daily", periodKey: "2026-05-01", content: { b: 1, a: 2 } }))).toBe('[daily report 2026-05-01] {"a":2,"b":1}');
  });
});
