import { describe, expect, it } from "vitest";
import { packRunTrace, replyMessageIdOf, unpackRunTrace } from "../../src/objects/agent/rows/stored-trace";

const row = { runKey: "a".repeat(64), reason: "userInitiated", attempt: 1 };
/** A finished run's trace as the run loop writes it (run-loop.ts `trace()` + `end()`). */
const written = (extra: Record<string, unknown>, attempt = 1) => ({
  reason: "userInitiated",
  coalescedRunKeys: [] as string[],
  steps: 1,
  model: "builtin:echo",
  usage: { inputTokens: 17, outputTokens: 5 },
  latencyMs: 81,
  attempt,
  resumed: attempt > 1,
  ...extra,
});

describe("lean run trace", () => {
  it("leaves out what the row and the run key say, and restores it in place", () => {
    const trace = written({ replyMessageId: replyMessageIdOf(row.runKey, 0) });
    const packed = packRunTrace(trace, row);
    expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(trace).length - 140);
    expect(packed).not.toHaveProperty("replyMessageId");
    expect(packed).not.toHaveProperty("reason");
    expect(JSON.stringify(unpackRunTrace(packed, row))).toBe(JSON.stringify(trace));
  });

  it("restores a resumed run's attempt and a stop reason after it", () => {
    const again = { ...row, attempt: 3 };
    const trace = written({ stopReason: "max_steps" }, 3);
    const packed = packRunTrace(trace, again);
    expect(packed).not.toHaveProperty("attempt");
    expect(JSON.stringify(unpackRunTrace(packed, again))).toBe(JSON.stringify(trace));
  });

  it("stores whole what it cannot restore exactly: other values, other orders, other shapes", () => {
    const cases: Record<string, unknown>[] = [
      written({ replyMessageId: "not-the-derived-id" }),
      { ...written({}), reason: "journalChanged" },
      written({ coalescedRunKeys: ["b".repeat(64)] }),
      { steps: 1, reason: "userInitiated" }, // reason not first
      { reason: "userInitiated", deadLettered: true },
      {},
    ];
    for (const trace of cases) {
      const packed = packRunTrace(trace, row);
      expect(JSON.stringify(unpackRunTrace(packed, row))).toBe(JSON.stringify(trace));
    }
    expect(packRunTrace({}, row)).toEqual({});
  });

  it("reads rows stored before the lean form as they are", () => {
    const old = written({ replyMessageId: "x" });
    expect(unpackRunTrace(old, row)).toBe(old);
  });
});
