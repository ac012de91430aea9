import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TraceEntry } from "../../src/objects/agent/rows/folded-trace";
import { unfoldEntries } from "../../src/objects/agent/rows/folded-trace";
import { isFolded, packRunTrace, replyMessageIdOf, unpackRunTrace } from "../../src/objects/agent/rows/stored-trace";

const startedAt = "2026-11-26T10:00:00.000Z";
const row = { runKey: "a".repeat(64), reason: "userInitiated", attempt: 1, enqueuedAt: startedAt };
const at = (ms: number) => new Date(Date.parse(startedAt) + ms).toISOString();

/** What a builtin chat turn writes: one attempt and the usage it metered (the gateway's rows), and the run loop's trace. */
const attempt: TraceEntry = { kind: "attempt", data: { provider: "builtin", model: "echo", attempt: 1, outcome: "succeeded", status: null, durationMs: 28, step: 0 }, createdAt: at(31) };
const usage: TraceEntry = { kind: "usage", data: { provider: "builtin", model: "echo", inputTokens: 64, outputTokens: 52, costMicros: 0, step: 0 }, createdAt: at(32) };
const written = {
  reason: "userInitiated",
  coalescedRunKeys: [] as string[],
  steps: 1,
  model: "builtin:echo",
  usage: { inputTokens: 64, outputTokens: 52 },
  latencyMs: 59,
  attempt: 1,
  resumed: false,
  replyMessageId: replyMessageIdOf(row.runKey, 0),
};

describe("a finished run's trace rows folded into its run row", () => {
  it("folds a chat turn's rows, leaves out the model and usage they say, and reads both back as written", () => {
    const packed = packRunTrace(written, row, [attempt, usage]);
    expect(isFolded(packed)).toBe(true);
    expect(packed).not.toHaveProperty("model");
    expect(packed).not.toHaveProperty("usage");
    expect(JSON.stringify(packed)).not.toContain('"status"'); // the attempt's status: null, restored after its outcome
    expect(JSON.stringify(unpackRunTrace(packed, row))).toBe(JSON.stringify(written));
    expect(unfoldEntries(packed, row)).toEqual([attempt, usage]);
    expect(JSON.stringify(unfoldEntries(packed, row))).toBe(JSON.stringify([attempt, usage]));
    // The two rows cost their data plus a few bytes: no run key, seq, kind or timestamp per row.
    const rowsBefore = [attempt, usage].reduce((n, e) => n + 64 + 1 + e.kind.length + JSON.stringify(e.data).length + e.createdAt.length, 0);
    const unfoldedTrace = JSON.stringify(packRunTrace(written, row)).length;
    expect(JSON.stringify(packed).length - unfoldedTrace).toBeLessThan(rowsBefore - 200);
  });

  it("keeps model and usage when the rows say something else, and timestamps that do not round-trip as they are", () => {
    const other = { ...written, model: "openai:gpt-x", usage: { inputTokens: 1, outputTokens: 2 } };
    const odd: TraceEntry = { ...usage, createdAt: "2026-11-26 10:00:00" };
    const packed = packRunTrace(other, row, [attempt, odd]);
    expect(isFolded(packed)).toBe(true);
    expect(packed).toHaveProperty("model", "openai:gpt-x");
    expect(JSON.stringify(unpackRunTrace(packed, row))).toBe(JSON.stringify(other));
    expect(JSON.stringify(unfoldEntries(packed, row))).toBe(JSON.stringify([attempt, odd]));
  });

  it("folds rows under an empty trace (a run ended without one) and reads the trace as empty", () => {
    const packed = packRunTrace({}, row, [attempt]);
    expect(isFolded(packed)).toBe(true);
    expect(unpackRunTrace(packed, row)).toEqual({});
    expect(unfoldEntries(packed, row)).toEqual([attempt]);
  });

  it("reads a trace stored before folding (rows still in run_trace) with no folded rows", () => {
    const before = packRunTrace(written, row);
    expect(isFolded(before)).toBe(false);
    expect(unfoldEntries(before, row)).toEqual([]);
    expect(JSON.stringify(unpackRunTrace(before, row))).toBe(JSON.stringify(written));
  });

  // Traces never hold "#" or "~" at the top (the run loop's keys are fixed: run-loop.ts trace()/end()); row data may.
  it("property: any trace with any rows reads back exactly, folded or not", () => {
    const value = fc.oneof(fc.integer({ min: -5, max: 1e6 }), fc.constantFrom(null, true, "builtin", "echo", "x:y", ""), fc.string({ maxLength: 6 }));
    const key = fc.constantFrom("provider", "model", "step", "inputTokens", "outputTokens", "costMicros", "status", "attempt", "gate", "outcome", "#", "~", "U");
    const data = fc.dictionary(key, value, { maxKeys: 7 });
    const createdAt = fc.oneof(
      fc.integer({ min: -10_000, max: 600_000 }).map(at),
      fc.constantFrom("2026-11-26 10:00:00", "not a date", "2026-11-26T10:00:00Z", ""),
    );
    const entry = fc.record({ kind: fc.constantFrom("attempt", "usage", "policy", "saga", "U", "a", "other"), data, createdAt });
    const traceKey = fc.constantFrom("reason", "coalescedRunKeys", "steps", "model", "usage", "latencyMs", "attempt", "resumed", "replyMessageId", "stopReason");
    const traceValue = fc.oneof(value, fc.constant([] as string[]), fc.record({ inputTokens: fc.nat(100), outputTokens: fc.nat(100) }), fc.constantFrom("builtin:echo", "userInitiated", replyMessageIdOf(row.runKey, 0)));
    const trace = fc.oneof(fc.dictionary(traceKey, traceValue, { maxKeys: 9 }), fc.constant(written));
    const context = fc.record({ enqueuedAt: fc.constantFrom(startedAt, "not a date"), attempt: fc.constantFrom(1, 2) });
    fc.assert(
      fc.property(trace, fc.array(entry, { maxLength: 5 }), context, (t, entries, ctx) => {
        const r = { ...row, ...ctx };
        const packed = packRunTrace(t, r, entries);
        expect(JSON.stringify(unpackRunTrace(packed, r))).toBe(JSON.stringify(t));
        // Folded: the rows read back exactly (then the caller deletes them from run_trace); else nothing is folded.
        if (isFolded(packed)) expect(JSON.stringify(unfoldEntries(packed, r))).toBe(JSON.stringify(entries));
        else expect(unfoldEntries(packed, r)).toEqual([]);
      }),
      { numRuns: 2_000, seed: 7 },
    );
  });
});
