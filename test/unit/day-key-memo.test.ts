import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dayKey } from "../../src/core/governance/budget";

/** What `dayKey` computed before it kept the last second's key: the formatter, every time. */
function formatted(nowMs: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(new Date(nowMs));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((part) => part.type === type)?.value ?? "";
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`;
}

const ZONES = ["UTC", "America/Los_Angeles", "Asia/Kathmandu", "Pacific/Kiritimati", "Australia/Lord_Howe", "America/Sao_Paulo", "Europe/Amsterdam", "Pacific/Apia"];

describe("dayKey keeps the key of the last second asked", () => {
  it("answers like the formatter on both sides of local midnights, odd offsets and old ones with seconds (LMT) included", () => {
    const cases: [string, string][] = [
      ["2026-03-08T00:00:00Z", "UTC"],
      ["2026-03-07T18:15:00Z", "Asia/Kathmandu"], // +05:45
      ["1930-06-01T23:40:28Z", "Europe/Amsterdam"], // +00:19:32 then
      ["2018-11-04T03:00:00Z", "America/Sao_Paulo"], // DST began at local midnight
      ["2011-12-30T10:00:00Z", "Pacific/Apia"], // the skipped day
    ];
    for (const [iso, zone] of cases) {
      const t = Date.parse(iso);
      for (const ms of [t - 1001, t - 1000, t - 1, t, t + 1, t + 999, t + 1000, t - 1, t]) expect(dayKey(ms, zone)).toBe(formatted(ms, zone));
    }
  });

  it("answers like the formatter for any sequence of instants and zones", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -2_208_988_800_000, max: 4_102_444_800_000 }), fc.constantFrom(...ZONES), fc.integer({ min: 0, max: 2_000 })), { maxLength: 20 }), (steps) => {
        for (const [base, zone, jitter] of steps) {
          for (const ms of [base, base + jitter, base - jitter]) expect(dayKey(ms, zone)).toBe(formatted(ms, zone));
        }
      }),
      { numRuns: 200 },
    );
  });
});
