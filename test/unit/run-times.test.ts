import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runTimeOf, storedRunTime } from "../../src/objects/agent/rows/run-times";
import { toRun } from "../../src/objects/agent/rows/records";

const enqueuedAt = "2026-11-26T10:00:00.000Z";
const row = { runKey: "r".repeat(64), reason: "userInitiated", threadId: "t", status: "completed", attempt: 1, enqueuedAt, startedAt: "+12", endedAt: "+57", errorCode: null, trace: {} };

describe("a run's started_at / ended_at stored relative to enqueued_at (issue 12 §6, session 7)", () => {
  it("stores milliseconds after the enqueueing and reads the timestamps back in their places", () => {
    expect(storedRunTime("2026-11-26T10:00:00.012Z", enqueuedAt)).toBe("+12");
    const run = toRun(row);
    expect(run.startedAt).toBe("2026-11-26T10:00:00.012Z");
    expect(run.endedAt).toBe("2026-11-26T10:00:00.057Z");
    expect(Object.keys(run)).toEqual(Object.keys(row));
  });

  it("reads rows stored in full as they are, and keeps in full what would not read back the same", () => {
    const full = toRun({ ...row, startedAt: "2026-11-26T10:00:00.012Z", endedAt: null });
    expect(full.startedAt).toBe("2026-11-26T10:00:00.012Z");
    expect(full.endedAt).toBeNull();
    expect(storedRunTime("2026-11-26T09:59:59.000Z", enqueuedAt)).toBe("2026-11-26T09:59:59.000Z"); // before the enqueueing
    expect(storedRunTime("2026-11-26 10:00:01", enqueuedAt)).toBe("2026-11-26 10:00:01"); // not the ISO form
  });

  it("property: whatever is stored reads back as the timestamp it was given", () => {
    const iso = fc.integer({ min: Date.parse(enqueuedAt) - 5_000, max: Date.parse(enqueuedAt) + 9e8 }).map((ms) => new Date(ms).toISOString());
    const base = fc.oneof(fc.constant(enqueuedAt), iso);
    fc.assert(
      fc.property(fc.oneof(iso, fc.constantFrom("2026-11-26T10:00:00Z", "x", "")), base, (value, at) => {
        expect(runTimeOf(storedRunTime(value, at), at)).toBe(value);
      }),
      { numRuns: 3_000, seed: 3 },
    );
  });
});
