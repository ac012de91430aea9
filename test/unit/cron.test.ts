import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import {
  cronMatchesWallClock,
  cronOccurrences,
  isValidTimeZone,
  nextCronOccurrence,
  parseCron,
  previousCronOccurrence,
  wallClockAt,
  type CronSchedule,
} from "../../src/core/wakes/cron";

const NY = "America/New_York";
const BERLIN = "Europe/Berlin";
const utc = (y: number, mo: number, d: number, h = 0, mi = 0) => Date.UTC(y, mo - 1, d, h, mi);

function next(expr: string, zone: string, after: number): number {
  const result = nextCronOccurrence(expr, zone, after);
  if (!result.ok) throw new Error(result.message);
  return result.at;
}

function schedule(expr: string): CronSchedule {
  const parsed = parseCron(expr);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.schedule;
}

/** Independent oracle: the zone's wall clock read through Intl, as UTC-epoch milliseconds. */
function wallMs(at: number, zone: string): number {
  const w = wallClockAt(at, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}
const offset = (at: number, zone: string) => wallMs(at, zone) - at;

describe("parseCron", () => {
  it("expands lists, ranges, steps and names", () => {
    const s = schedule("*/15 9-17/4 1,15 JAN-mar mon-FRI");
    expect(s.minute).toEqual([0, 15, 30, 45]);
    expect(s.hour).toEqual([9, 13, 17]);
    expect(s.dayOfMonth).toEqual([1, 15]);
    expect(s.month).toEqual([1, 2, 3]);
    expect(s.dayOfWeek).toEqual([1, 2, 3, 4, 5]);
  });

  it("reads 7 as Sunday and `n/step` as `n-max/step`", () => {
    expect(schedule("0 0 * * 7").dayOfWeek).toEqual([0]);
    expect(schedule("0 0 * * 5-7").dayOfWeek).toEqual([0, 5, 6]);
    expect(schedule("5/20 * * * *").minute).toEqual([5, 25, 45]);
  });

  it("treats a day field as unrestricted only when it selects every value", () => {
    expect(schedule("0 0 * * MON")).toMatchObject({ dayOfMonthRestricted: false, dayOfWeekRestricted: true });
    expect(schedule("0 0 1-31 * 0-7")).toMatchObject({ dayOfMonthRestricted: false, dayOfWeekRestricted: false });
    expect(schedule("0 0 */2 * MON")).toMatchObject({ dayOfMonthRestricted: true, dayOfWeekRestricted: true });
  });

  it.each([
    ["0 25 * * *", "hour", "cron field 'hour' value 25 out of range 0-23"],
    ["60 * * * *", "minute", "cron field 'minute' value 60 out of range 0-59"],
    ["0 0 0 * *", "day-of-month", "cron field 'day-of-month' value 0 out of range 1-31"],
    ["0 0 * 13 *", "month", "cron field 'month' value 13 out of range 1-12"],
    ["0 0 * * 8", "day-of-week", "cron field 'day-of-week' value 8 out of range 0-7"],
    ["0 0 * FOO *", "month", "cron field 'month' has invalid value 'FOO'"],
    ["*/0 * * * *", "minute", "cron field 'minute' step '0' must be an integer 1-60"],
    ["0 5-3 * * *", "hour", "cron field 'hour' range '5-3' runs backwards"],
    ["0 1,,2 * * *", "hour", "cron field 'hour' has an empty item in '1,,2'"],
    ["0 0 30 2 *", "day-of-month", "cron field 'day-of-month' value 30 never occurs in the selected month(s), so the expression never fires"],
  ])("rejects %s naming the field", (expr, field, message) => {
    expect(parseCron(expr)).toEqual({ ok: false, code: "cron_invalid", field, message });
  });

  it("requires exactly five fields", () => {
    expect(parseCron("* * * *")).toMatchObject({ ok: false, field: null, message: expect.stringContaining("got 4") });
    expect(parseCron("0 0 * * * 2026")).toMatchObject({ ok: false, field: null });
    expect(parseCron("@daily")).toMatchObject({ ok: false, field: null });
  });

  it("accepts day 30 in February when a weekday also qualifies (OR semantics)", () => {
    expect(parseCron("0 0 30 2 MON").ok).toBe(true);
  });
});

describe("nextCronOccurrence", () => {
  it("fires strictly after the given instant", () => {
    expect(next("0 7 * * *", "UTC", utc(2026, 5, 1, 7))).toBe(utc(2026, 5, 2, 7));
    expect(next("0 7 * * *", "UTC", utc(2026, 5, 1, 6, 59))).toBe(utc(2026, 5, 1, 7));
  });

  it("ORs day-of-month and day-of-week when both are restricted", () => {
    // 2026-02-13 is a Friday; from 2026-02-01 the first hit is Friday the 6th.
    expect(next("0 0 13 * FRI", "UTC", utc(2026, 2, 1))).toBe(utc(2026, 2, 6));
    expect(next("0 0 13 * FRI", "UTC", utc(2026, 2, 10))).toBe(utc(2026, 2, 13));
  });

  it("ORs a stepped day-of-month with a weekday too (no Vixie star quirk)", () => {
    // Odd days OR Mondays: from Tue 2026-05-12 (even) → Wed 13th; after Sun 31st → Mon June 1st.
    expect(next("0 0 */2 * MON", "UTC", utc(2026, 5, 12, 1))).toBe(utc(2026, 5, 13));
    expect(next("0 0 */2 * MON", "UTC", utc(2026, 5, 31, 1))).toBe(utc(2026, 6, 1));
  });

  it("lets the restricted day field decide when the other is full", () => {
    expect(next("0 0 1-31 * FRI", "UTC", utc(2026, 2, 1))).toBe(utc(2026, 2, 6));
    expect(next("0 0 13 * 0-7", "UTC", utc(2026, 2, 1))).toBe(utc(2026, 2, 13));
  });

  describe("America/New_York spring-forward 2026-03-08 (02:00 EST → 03:00 EDT)", () => {
    it("fires a 02:30 job at the first instant after the gap (03:00 EDT), then 02:30 the next day", () => {
      const first = next("30 2 * * *", NY, utc(2026, 3, 7, 12));
      expect(first).toBe(utc(2026, 3, 8, 7)); // 03:00 EDT
      expect(wallClockAt(first, NY)).toMatchObject({ day: 8, hour: 3, minute: 0 });
      expect(next("30 2 * * *", NY, first)).toBe(utc(2026, 3, 9, 6, 30)); // 02:30 EDT
    });

    it("collapses every gap time (and 03:00 itself) into one firing", () => {
      const first = next("0,30 2,3 * * *", NY, utc(2026, 3, 8, 6, 59));
      expect(first).toBe(utc(2026, 3, 8, 7));
      expect(next("0,30 2,3 * * *", NY, first)).toBe(utc(2026, 3, 8, 7, 30)); // 03:30 EDT
    });

    it("keeps the day before at 02:30 EST", () => {
      expect(next("30 2 * * *", NY, utc(2026, 3, 6, 12))).toBe(utc(2026, 3, 7, 7, 30));
    });
  });

  describe("America/New_York fall-back 2026-11-01 (02:00 EDT → 01:00 EST)", () => {
    it("fires a 01:30 job once, on the first (EDT) occurrence", () => {
      const first = next("30 1 * * *", NY, utc(2026, 11, 1, 4));
      expect(first).toBe(utc(2026, 11, 1, 5, 30)); // 01:30 EDT
      expect(next("30 1 * * *", NY, first)).toBe(utc(2026, 11, 2, 6, 30)); // next day, 01:30 EST
    });

    it("does not repeat sub-hourly slots during the repeated hour", () => {
      const first = next("*/30 * * * *", NY, utc(2026, 11, 1, 5, 15));
      expect(first).toBe(utc(2026, 11, 1, 5, 30)); // 01:30 EDT
      expect(next("*/30 * * * *", NY, first)).toBe(utc(2026, 11, 1, 7)); // 02:00 EST
    });

    it("from inside the repeated hour, the next slot is after it", () => {
      expect(next("30 1 * * *", NY, utc(2026, 11, 1, 6, 10))).toBe(utc(2026, 11, 2, 6, 30));
      expect(next("30 2 * * *", NY, utc(2026, 11, 1, 6, 10))).toBe(utc(2026, 11, 1, 7, 30)); // 02:30 EST
    });
  });

  it("keeps `0 7 * * *` at 07:00 local in Europe/Berlin across 2026-03-29", () => {
    const fires = [...take(cronOccurrences("0 7 * * *", BERLIN, utc(2026, 3, 27, 12)), 4)];
    expect(fires).toEqual([utc(2026, 3, 28, 6), utc(2026, 3, 29, 5), utc(2026, 3, 30, 5), utc(2026, 3, 31, 5)]);
    for (const at of fires) expect(wallClockAt(at, BERLIN)).toMatchObject({ hour: 7, minute: 0 });
  });

  it("handles a DST change at midnight (America/Santiago 2026-09-06 00:00 → 01:00)", () => {
    const at = next("15 0 * * *", "America/Santiago", utc(2026, 9, 5, 12));
    expect(wallClockAt(at, "America/Santiago")).toMatchObject({ day: 6, hour: 1, minute: 0 });
  });

  it("finds a leap-day schedule years away without scanning minutes", () => {
    // Counted, not timed (a loaded CI machine can stall any clock bound): every wall-clock conversion is one
    // formatToParts call; a walk over the ~3.7 M minutes of these seven years would make millions, and even one
    // conversion per calendar day would make thousands.
    const conversions = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    try {
      expect(next("0 0 29 2 *", "UTC", utc(2097, 1, 1))).toBe(utc(2104, 2, 29));
      expect(conversions.mock.calls.length).toBeLessThan(100);
    } finally {
      conversions.mockRestore();
    }
  });

  it("reports bad zones, instants and expressions as values", () => {
    expect(nextCronOccurrence("0 7 * * *", "Mars/Olympus", 0)).toMatchObject({ ok: false, code: "timezone_invalid" });
    expect(nextCronOccurrence("0 7 * * *", "UTC", Number.NaN)).toMatchObject({ ok: false, code: "instant_out_of_range" });
    expect(nextCronOccurrence("0 24 * * *", "UTC", 0)).toMatchObject({ ok: false, code: "cron_invalid", field: "hour" });
    expect(isValidTimeZone("Europe/Berlin")).toBe(true);
    expect(isValidTimeZone("")).toBe(false);
  });
});

describe("previousCronOccurrence", () => {
  it("returns the last firing at or before the instant, with the same DST rules", () => {
    expect(previousCronOccurrence("30 2 * * *", NY, utc(2026, 3, 8, 12))).toEqual({ ok: true, at: utc(2026, 3, 8, 7) });
    expect(previousCronOccurrence("30 1 * * *", NY, utc(2026, 11, 1, 6, 45))).toEqual({ ok: true, at: utc(2026, 11, 1, 5, 30) });
    expect(previousCronOccurrence("0 7 * * *", "UTC", utc(2026, 5, 1, 7))).toEqual({ ok: true, at: utc(2026, 5, 1, 7) });
  });
});

function* take<T>(items: Iterable<T>, n: number): Generator<T> {
  if (n <= 0) return;
  for (const item of items) {
    yield item;
    if (--n === 0) return;
  }
}

const ZONES = [
  "UTC",
  NY,
  BERLIN,
  "Europe/London",
  "America/Santiago",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "Asia/Kolkata",
  "America/Sao_Paulo",
];

const fieldArb = (min: number, max: number) =>
  fc.oneof(
    fc.constant("*"),
    fc.integer({ min: 1, max: Math.min(max - min + 1, 12) }).map((step) => `*/${step}`),
    fc.integer({ min, max }).map(String),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 4 }).map((values) => values.join(",")),
  );

const exprArb = fc
  .tuple(fieldArb(0, 59), fieldArb(0, 23), fieldArb(1, 31), fieldArb(1, 12), fieldArb(0, 6))
  .map((fields) => fields.join(" "))
  .filter((expr) => parseCron(expr).ok);

/** True when `at` is the first instant after a spring-forward gap that swallowed a matching wall time. */
function isGapEndFor(s: CronSchedule, at: number, zone: string): boolean {
  const before = wallMs(at - 1000, zone) + 1000;
  const after = wallMs(at, zone);
  if (after - before <= 0) return false;
  for (let w = Math.ceil(before / 60_000) * 60_000; w <= after; w += 60_000) {
    const d = new Date(w);
    const wall = { year: 0, month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: 0, dayOfWeek: d.getUTCDay() };
    if (cronMatchesWallClock(s, wall)) return true;
  }
  return false;
}

/** Hours in [from, to) at which the zone's UTC offset changes (test-side scan, independent of the module). */
function offsetChanges(zone: string, from: number, to: number): number[] {
  const changes: number[] = [];
  for (let at = from; at < to; at += 3_600_000) {
    if (offset(at, zone) !== offset(at + 3_600_000, zone)) changes.push(at + 3_600_000);
  }
  return changes;
}

describe("nextCronOccurrence properties", () => {
  it("is strictly increasing and each firing matches the expression on the local wall clock (or ends a DST gap)", () => {
    fc.assert(
      fc.property(exprArb, fc.constantFrom(...ZONES), fc.integer({ min: utc(2000, 1, 1), max: utc(2100, 1, 1) }), (expr, zone, after) => {
        const s = schedule(expr);
        let previous = after;
        for (const at of take(cronOccurrences(s, zone, after), 5)) {
          expect(at).toBeGreaterThan(previous);
          const wall = wallClockAt(at, zone);
          const matches = wall.second === 0 && cronMatchesWallClock(s, wall);
          if (!matches) expect(isGapEndFor(s, at, zone)).toBe(true);
          previous = at;
        }
      }),
      { numRuns: 150 },
    );
  });

  it("never skips a matching wall time nor fires one twice (brute-force minute scan across DST changes)", () => {
    const cases = [NY, BERLIN, "Australia/Lord_Howe", "America/Santiago"].flatMap((zone) =>
      offsetChanges(zone, utc(2026, 1, 1), utc(2027, 1, 1)).map((transition) => ({ zone, transition })),
    );
    expect(cases.length).toBe(8);
    const dense = fc.tuple(fieldArb(0, 59), fieldArb(0, 23)).map(([minute, hour]) => `${minute} ${hour} * * *`);
    fc.assert(
      fc.property(dense, fc.constantFrom(...cases), fc.integer({ min: -6 * 3_600_000, max: 0 }), (expr, { zone, transition }, delta) => {
        const s = schedule(expr);
        const start = transition + delta;
        const end = transition + 6 * 3_600_000;
        const fired = new Set(take(cronOccurrences(s, zone, start), 2_000));
        const firedWalls = new Set<number>();
        for (let u = Math.floor(start / 60_000) * 60_000 + 60_000; u <= end; u += 60_000) {
          const matches = cronMatchesWallClock(s, wallClockAt(u, zone));
          const foldBack = offset(u - 3 * 3_600_000, zone) - offset(u, zone);
          const repeat = foldBack > 0 && wallMs(u - foldBack, zone) === wallMs(u, zone);
          if (fired.has(u) && matches) {
            expect(firedWalls.has(wallMs(u, zone)), "fired the same wall time twice").toBe(false);
            firedWalls.add(wallMs(u, zone));
          }
          if (matches && !repeat) expect(fired.has(u), `${expr} in ${zone}: ${new Date(u).toISOString()} skipped`).toBe(true);
          if (matches && repeat) expect(fired.has(u), `${expr} in ${zone}: repeated ${new Date(u).toISOString()} fired`).toBe(false);
        }
      }),
      { numRuns: 60 },
    );
  }, 60_000); // a year of minutes in four zones: seconds on an idle machine, more on a loaded CI runner

  it("previousCronOccurrence(next(t)) is next(t), and nothing fires between previous(t) and t", () => {
    fc.assert(
      fc.property(exprArb, fc.constantFrom(...ZONES), fc.integer({ min: utc(2000, 1, 1), max: utc(2100, 1, 1) }), (expr, zone, t) => {
        const at = next(expr, zone, t);
        expect(previousCronOccurrence(expr, zone, at)).toEqual({ ok: true, at });
        const previous = previousCronOccurrence(expr, zone, t);
        if (previous.ok) expect(next(expr, zone, previous.at)).toBe(at);
      }),
      { numRuns: 100 },
    );
  });
});
