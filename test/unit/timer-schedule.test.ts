import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CATCHUP_WINDOW_SECONDS,
  initialNextRunAt,
  MAX_COUNTED_MISSED_SLOTS,
  nextRunAt,
  parseTimerSpec,
  planDueTimer,
  TimerCatchup,
  TimerSpec,
  type PlanDueTimerInput,
  type TimerDecision,
} from "../../src/core/wakes/timer-schedule";

const utc = (y: number, mo: number, d: number, h = 0, mi = 0) => Date.UTC(y, mo - 1, d, h, mi);
const hourly: TimerSpec = { kind: "cron", expr: "0 * * * *", timeZone: "UTC" };

/** What the shell does on each alarm: plan, emit at most one wake, persist the advanced slot. */
function runAlarm(input: PlanDueTimerInput) {
  const wakes: TimerDecision[] = [];
  const decisions: TimerDecision[] = [];
  let nextRun: number | null = input.nextRunAt;
  while (nextRun !== null) {
    const decision = planDueTimer({ ...input, nextRunAt: nextRun });
    decisions.push(decision);
    if (decision.action === "fire" || decision.action === "catchup") wakes.push(decision);
    if (decision.action === "wait") break;
    nextRun = decision.advancedNextRunAt;
  }
  return { wakes, decisions };
}

describe("TimerSpec schema", () => {
  it("accepts the three kinds", () => {
    expect(TimerSpec.parse({ kind: "cron", expr: "0 7 * * MON-FRI", timeZone: "Europe/Berlin" }).kind).toBe("cron");
    expect(TimerSpec.parse({ kind: "interval", everySeconds: 900 })).toEqual({ kind: "interval", everySeconds: 900 });
    expect(TimerSpec.parse({ kind: "once", at: utc(2026, 5, 1) })).toEqual({ kind: "once", at: utc(2026, 5, 1) });
  });

  it("names the failing field with the cron parser's message", () => {
    const result = parseTimerSpec({ kind: "cron", expr: "0 25 * * *", timeZone: "Nowhere/City" });
    expect(result).toMatchObject({ ok: false, code: "invalid_timer_spec" });
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path: "expr", message: "cron field 'hour' value 25 out of range 0-23" },
      { path: "timeZone", message: "timeZone must be a valid IANA time zone" },
    ]);
  });

  it("rejects non-positive intervals, unknown kinds and unknown keys", () => {
    expect(parseTimerSpec({ kind: "interval", everySeconds: 0 })).toMatchObject({ ok: false, issues: [{ path: "everySeconds" }] });
    expect(parseTimerSpec({ kind: "interval", everySeconds: 1.5 }).ok).toBe(false);
    expect(parseTimerSpec({ kind: "weekly" }).ok).toBe(false);
    expect(parseTimerSpec({ kind: "once", at: 1, extra: true }).ok).toBe(false);
  });

  it("defaults catch-up to coalesce within 86 400 s", () => {
    expect(TimerCatchup.parse({})).toEqual({ catchupPolicy: "coalesce", catchupWindowSeconds: DEFAULT_CATCHUP_WINDOW_SECONDS });
    expect(TimerCatchup.safeParse({ catchupPolicy: "replay" }).success).toBe(false);
  });
});

describe("nextRunAt", () => {
  it("cron: the next occurrence in the timer's zone", () => {
    expect(nextRunAt({ kind: "cron", expr: "0 7 * * *", timeZone: "Europe/Berlin" }, utc(2026, 3, 29))).toBe(utc(2026, 3, 29, 5));
  });

  it("interval with anchor: the grid anchorAt + k·every, strictly after", () => {
    const spec: TimerSpec = { kind: "interval", everySeconds: 600, anchorAt: utc(2026, 1, 1, 0, 5) };
    expect(nextRunAt(spec, utc(2026, 1, 1))).toBe(utc(2026, 1, 1, 0, 5));
    expect(nextRunAt(spec, utc(2026, 1, 1, 0, 5))).toBe(utc(2026, 1, 1, 0, 15));
    expect(nextRunAt(spec, utc(2026, 1, 1, 0, 14))).toBe(utc(2026, 1, 1, 0, 15));
  });

  it("interval without anchor: one period after", () => {
    expect(nextRunAt({ kind: "interval", everySeconds: 90 }, 1_000)).toBe(91_000);
  });

  it("once: its instant while in the future, then null", () => {
    expect(nextRunAt({ kind: "once", at: 5_000 }, 4_999)).toBe(5_000);
    expect(nextRunAt({ kind: "once", at: 5_000 }, 5_000)).toBeNull();
    expect(initialNextRunAt({ kind: "once", at: 5_000 }, 9_000)).toBe(5_000);
  });
});

describe("planDueTimer", () => {
  it("waits while the slot is in the future", () => {
    const decision = planDueTimer({ spec: hourly, nextRunAt: utc(2026, 5, 1, 11), nowMs: utc(2026, 5, 1, 10, 30) });
    expect(decision).toMatchObject({ action: "wait", advancedNextRunAt: utc(2026, 5, 1, 11) });
  });

  it("fires exactly one due slot, keyed by its scheduledAt, even when the alarm is a little late", () => {
    const decision = planDueTimer({ spec: hourly, nextRunAt: utc(2026, 5, 1, 10), nowMs: utc(2026, 5, 1, 10, 7) });
    expect(decision).toEqual({
      action: "fire",
      wakeReason: "timer",
      scheduledAt: utc(2026, 5, 1, 10),
      advancedNextRunAt: utc(2026, 5, 1, 11),
      evaluatedAt: utc(2026, 5, 1, 10, 7),
      previousNextRunAt: utc(2026, 5, 1, 10),
      catchupPolicy: "coalesce",
      catchupWindowSeconds: 86_400,
    });
  });

  it("coalesces downtime across three cron slots into exactly one catch-up", () => {
    const input = { spec: hourly, nextRunAt: utc(2026, 5, 1, 10), nowMs: utc(2026, 5, 1, 12, 30) };
    expect(planDueTimer(input)).toMatchObject({
      action: "catchup",
      wakeReason: "recoveryCatchup",
      cause: "timer",
      missedCount: 3,
      missedCountCapped: false,
      firstMissedAt: utc(2026, 5, 1, 10),
      lastMissedAt: utc(2026, 5, 1, 12),
      scheduledAt: utc(2026, 5, 1, 12),
      advancedNextRunAt: utc(2026, 5, 1, 13),
    });
    const { wakes, decisions } = runAlarm(input);
    expect(wakes).toHaveLength(1);
    expect(decisions.map((d) => d.action)).toEqual(["catchup", "wait"]);
  });

  it("skip policy drops the missed slots and advances without a wake", () => {
    const input = { spec: hourly, nextRunAt: utc(2026, 5, 1, 10), nowMs: utc(2026, 5, 1, 12, 30), catchupPolicy: "skip" as const };
    expect(planDueTimer(input)).toMatchObject({ action: "skip", reason: "policy_skip", missedCount: 3, advancedNextRunAt: utc(2026, 5, 1, 13) });
    expect(runAlarm(input).wakes).toHaveLength(0);
  });

  it("skips when even the newest missed slot is older than the catch-up window", () => {
    const daily: TimerSpec = { kind: "cron", expr: "0 7 * * *", timeZone: "Europe/Berlin" };
    const input = { spec: daily, nextRunAt: utc(2026, 5, 1, 5), nowMs: utc(2026, 5, 4, 10) };
    expect(planDueTimer(input)).toMatchObject({ action: "catchup", missedCount: 4, lastMissedAt: utc(2026, 5, 4, 5) });
    expect(planDueTimer({ ...input, catchupWindowSeconds: 3_600 })).toMatchObject({
      action: "skip",
      reason: "outside_catchup_window",
      missedCount: 4,
      advancedNextRunAt: utc(2026, 5, 5, 5),
    });
    const lateSingle = planDueTimer({ spec: daily, nextRunAt: utc(2026, 5, 4, 5), nowMs: utc(2026, 5, 4, 10), catchupWindowSeconds: 3_600 });
    expect(lateSingle).toMatchObject({ action: "skip", reason: "outside_catchup_window", missedCount: 1 });
  });

  it("treats the window boundary as inclusive", () => {
    const base = { spec: hourly, nextRunAt: utc(2026, 5, 1, 10), catchupWindowSeconds: 600 };
    expect(planDueTimer({ ...base, nowMs: utc(2026, 5, 1, 10, 10) }).action).toBe("fire");
    expect(planDueTimer({ ...base, nowMs: utc(2026, 5, 1, 10, 10) + 1 }).action).toBe("skip");
  });

  it("counts DST-shifted cron slots across a spring-forward (one catch-up for three days)", () => {
    const spec: TimerSpec = { kind: "cron", expr: "30 2 * * *", timeZone: "America/New_York" };
    const decision = planDueTimer({ spec, nextRunAt: utc(2026, 3, 7, 7, 30), nowMs: utc(2026, 3, 9, 12) });
    expect(decision).toMatchObject({ action: "catchup", missedCount: 3, lastMissedAt: utc(2026, 3, 9, 6, 30), advancedNextRunAt: utc(2026, 3, 10, 6, 30) });
  });

  it("interval: counts grid slots arithmetically and stays on the grid", () => {
    const spec: TimerSpec = { kind: "interval", everySeconds: 600 };
    const decision = planDueTimer({ spec, nextRunAt: utc(2026, 5, 1, 10), nowMs: utc(2026, 5, 1, 10, 45) });
    expect(decision).toMatchObject({ action: "catchup", missedCount: 5, lastMissedAt: utc(2026, 5, 1, 10, 40), advancedNextRunAt: utc(2026, 5, 1, 10, 50) });
    const late = planDueTimer({ spec, nextRunAt: utc(2026, 5, 1, 10), nowMs: utc(2026, 5, 1, 10, 3) });
    expect(late).toMatchObject({ action: "fire", advancedNextRunAt: utc(2026, 5, 1, 10, 10) });
  });

  it("once: fires, then has no next run; a long-missed once is skipped", () => {
    const spec: TimerSpec = { kind: "once", at: utc(2026, 5, 1, 10) };
    expect(planDueTimer({ spec, nextRunAt: spec.at, nowMs: utc(2026, 5, 1, 10, 1) })).toMatchObject({ action: "fire", scheduledAt: spec.at, advancedNextRunAt: null });
    expect(planDueTimer({ spec, nextRunAt: spec.at, nowMs: utc(2026, 5, 3) })).toMatchObject({ action: "skip", reason: "outside_catchup_window", advancedNextRunAt: null });
    expect(runAlarm({ spec, nextRunAt: spec.at, nowMs: utc(2026, 5, 1, 10, 1) }).wakes).toHaveLength(1);
  });

  it("caps the missed-slot count at 10 000 and still finds the last slot and the next one", () => {
    const everyMinute: TimerSpec = { kind: "cron", expr: "* * * * *", timeZone: "Europe/Berlin" };
    const now = utc(2026, 5, 20, 12, 0) + 30_000;
    const started = performance.now();
    const decision = planDueTimer({ spec: everyMinute, nextRunAt: utc(2026, 5, 1), nowMs: now });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(decision).toMatchObject({
      action: "catchup",
      missedCount: MAX_COUNTED_MISSED_SLOTS,
      missedCountCapped: true,
      firstMissedAt: utc(2026, 5, 1),
      lastMissedAt: utc(2026, 5, 20, 12, 0),
      advancedNextRunAt: utc(2026, 5, 20, 12, 1),
    });
    const interval = planDueTimer({ spec: { kind: "interval", everySeconds: 1 }, nextRunAt: 0, nowMs: 50_000_000 });
    expect(interval).toMatchObject({ missedCount: MAX_COUNTED_MISSED_SLOTS, missedCountCapped: true, advancedNextRunAt: 50_001_000 });
  });

  it("reschedules when the clock moved backwards past the persisted slot", () => {
    const decision = planDueTimer({ spec: hourly, nextRunAt: utc(2026, 5, 2, 10), nowMs: utc(2026, 5, 1, 10, 30) });
    expect(decision).toMatchObject({ action: "reschedule", reason: "clock_moved_backwards", advancedNextRunAt: utc(2026, 5, 1, 11) });
  });

  it("rejects invalid settings as bugs", () => {
    expect(() => planDueTimer({ spec: hourly, nextRunAt: 0, nowMs: 1, catchupWindowSeconds: 0 })).toThrow(RangeError);
  });
});

describe("planDueTimer properties", () => {
  const specArb: fc.Arbitrary<TimerSpec> = fc.oneof(
    fc.record({ kind: fc.constant("interval" as const), everySeconds: fc.integer({ min: 1, max: 7 * 86_400 }) }),
    fc.record({
      kind: fc.constant("interval" as const),
      everySeconds: fc.integer({ min: 60, max: 86_400 }),
      anchorAt: fc.integer({ min: utc(2025, 1, 1), max: utc(2026, 1, 1) }),
    }),
    fc.record({
      kind: fc.constant("cron" as const),
      expr: fc.constantFrom("0 * * * *", "*/15 * * * *", "30 2 * * *", "0 7 * * MON-FRI", "0 0 1 * *", "5 4 * * SUN"),
      timeZone: fc.constantFrom("UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"),
    }),
    fc.record({ kind: fc.constant("once" as const), at: fc.integer({ min: utc(2026, 1, 1), max: utc(2026, 3, 1) }) }),
  );
  const scenario = fc.record({
    spec: specArb,
    start: fc.integer({ min: utc(2026, 1, 1), max: utc(2026, 12, 1) }),
    downtime: fc.integer({ min: 0, max: 5 * 86_400_000 }),
    catchupPolicy: fc.constantFrom("coalesce" as const, "skip" as const),
    catchupWindowSeconds: fc.integer({ min: 60, max: 3 * 86_400 }),
  });

  it("any downtime yields at most one wake, a plain-JSON record, and a next run strictly after now", () => {
    fc.assert(
      fc.property(scenario, ({ spec, start, downtime, catchupPolicy, catchupWindowSeconds }) => {
        const first = initialNextRunAt(spec, start);
        if (first === null) return;
        const nowMs = Math.max(first, start) + downtime;
        const input = { spec, nextRunAt: first, nowMs, catchupPolicy, catchupWindowSeconds };
        const decision = planDueTimer(input);
        expect(JSON.parse(JSON.stringify(decision))).toEqual(decision);
        if (decision.advancedNextRunAt !== null) expect(decision.advancedNextRunAt).toBeGreaterThan(nowMs);
        const { wakes, decisions } = runAlarm(input);
        expect(wakes.length).toBeLessThanOrEqual(1);
        expect(decisions.length).toBeLessThanOrEqual(2);
      }),
      { numRuns: 300 },
    );
  });

  it("missedCount equals the slots a naive nextRunAt walk finds, and the action follows from it", () => {
    fc.assert(
      fc.property(scenario, ({ spec, start, downtime, catchupPolicy, catchupWindowSeconds }) => {
        const first = initialNextRunAt(spec, start);
        if (first === null || (spec.kind === "interval" && spec.anchorAt === undefined)) return;
        const nowMs = first + downtime;
        const slots = [first];
        for (let at = nextRunAt(spec, first); at !== null && at <= nowMs && slots.length <= MAX_COUNTED_MISSED_SLOTS; at = nextRunAt(spec, at)) slots.push(at);
        const decision = planDueTimer({ spec, nextRunAt: first, nowMs, catchupPolicy, catchupWindowSeconds });
        const last = slots[Math.min(slots.length, MAX_COUNTED_MISSED_SLOTS) - 1]!;
        const expired = nowMs - last > catchupWindowSeconds * 1000;
        const expected = expired ? "skip" : slots.length === 1 ? "fire" : catchupPolicy === "skip" ? "skip" : "catchup";
        expect(decision.action).toBe(expected);
        if ("missedCount" in decision) {
          expect(decision.missedCount).toBe(Math.min(slots.length, MAX_COUNTED_MISSED_SLOTS));
          if (!decision.missedCountCapped) expect(decision.lastMissedAt).toBe(last);
        }
        expect(decision.advancedNextRunAt).toBe(nextRunAt(spec, nowMs));
      }),
      { numRuns: 200 },
    );
  });

  it("an unanchored interval never drifts: the next run stays on the grid of the persisted slot", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 86_400 }), fc.integer({ min: 0, max: 10 * 86_400_000 }), (everySeconds, downtime) => {
        const first = utc(2026, 5, 1);
        const decision = planDueTimer({ spec: { kind: "interval", everySeconds }, nextRunAt: first, nowMs: first + downtime });
        expect(((decision.advancedNextRunAt ?? 0) - first) % (everySeconds * 1000)).toBe(0);
      }),
    );
  });
});
