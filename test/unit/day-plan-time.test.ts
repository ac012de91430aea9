import { describe, expect, it } from "vitest";
import { blockClock, zonedInstant } from "../../src/core/tools/day-plan-time";

describe("day-plan block clocks", () => {
  it("maps an instant to its wall clock on the plan's date in the tenant's zone, and back", () => {
    expect(blockClock("2026-02-18T09:00:00-05:00", "2026-02-18", "America/New_York")).toEqual({ ok: true, clock: "09:00" });
    expect(blockClock("2026-02-18T14:00:00Z", "2026-02-18", "America/New_York")).toEqual({ ok: true, clock: "09:00" });
    expect(zonedInstant("2026-02-18", "09:00", "America/New_York")).toBe("2026-02-18T09:00:00-05:00");
    expect(zonedInstant("2026-07-01", "09:30", "Europe/Berlin")).toBe("2026-07-01T09:30:00+02:00");
    expect(zonedInstant("2026-07-01", "23:59", "UTC")).toBe("2026-07-01T23:59:00+00:00");
  });

  it("refuses another local day and fractions of a minute", () => {
    expect(blockClock("2026-02-19T01:00:00Z", "2026-02-18", "UTC")).toMatchObject({ ok: false });
    expect(blockClock("2026-02-18T23:30:00-05:00", "2026-02-18", "UTC")).toMatchObject({ ok: false });
    expect(blockClock("2026-02-18T09:00:30Z", "2026-02-18", "UTC")).toMatchObject({ ok: false });
  });

  it("round-trips every quarter hour of a DST-change day", () => {
    for (let minutes = 0; minutes < 24 * 60; minutes += 15) {
      const clock = `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
      const instant = zonedInstant("2026-11-01", clock, "America/New_York");
      const back = blockClock(instant, "2026-11-01", "America/New_York");
      expect(back).toEqual({ ok: true, clock });
    }
  });
});
