import { z } from "zod";
import {
  cronOccurrences,
  isValidTimeZone,
  MAX_CRON_INSTANT_MS,
  nextCronOccurrence,
  parseCron,
  previousCronOccurrence,
} from "./cron";

/**
 * Timer schedules and the catch-up decision (seed 000 "Timer recovery semantics",
 * seed 003 bounded catch-up). All instants are UTC epoch milliseconds.
 */
export const DEFAULT_CATCHUP_WINDOW_SECONDS = 86_400;
/** Missed slots are counted up to this many; beyond it `missedCountCapped` is set and the count is a floor. */
export const MAX_COUNTED_MISSED_SLOTS = 10_000;
export const MAX_INTERVAL_SECONDS = 366 * 86_400;
export const MAX_CATCHUP_WINDOW_SECONDS = 30 * 86_400;
export const CATCHUP_POLICIES = ["coalesce", "skip"] as const;
export type CatchupPolicy = (typeof CATCHUP_POLICIES)[number];

const EpochMs = z.number().int().min(0).max(MAX_CRON_INSTANT_MS);

/** `{kind:"cron", expr, timeZone}`: 5-field cron in an IANA zone. */
export const CronTimerSpec = z.strictObject({
  kind: z.literal("cron"),
  expr: z.string().superRefine((expr, ctx) => {
    const parsed = parseCron(expr);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  }),
  timeZone: z.string().refine(isValidTimeZone, { message: "timeZone must be a valid IANA time zone" }),
});

/** `{kind:"interval", everySeconds, anchorAt?}`: slots at `anchorAt + k·everySeconds`, k ≥ 0. */
export const IntervalTimerSpec = z.strictObject({
  kind: z.literal("interval"),
  everySeconds: z.number().int().min(1).max(MAX_INTERVAL_SECONDS),
  anchorAt: EpochMs.optional(),
});

/** `{kind:"once", at}`: a single slot. */
export const OnceTimerSpec = z.strictObject({ kind: z.literal("once"), at: EpochMs });

export const TimerSpec = z.discriminatedUnion("kind", [CronTimerSpec, IntervalTimerSpec, OnceTimerSpec]);
export type TimerSpec = z.infer<typeof TimerSpec>;

/** Per-timer catch-up settings, with the SPEC defaults (86 400 s, coalesce). */
export const TimerCatchup = z.strictObject({
  catchupPolicy: z.enum(CATCHUP_POLICIES).default("coalesce"),
  catchupWindowSeconds: z.number().int().min(1).max(MAX_CATCHUP_WINDOW_SECONDS).default(DEFAULT_CATCHUP_WINDOW_SECONDS),
});
export type TimerCatchup = z.infer<typeof TimerCatchup>;

export type TimerSpecParseResult =
  | { ok: true; spec: TimerSpec }
  | { ok: false; code: "invalid_timer_spec"; message: string; issues: Array<{ path: string; message: string }> };

/** Validates untrusted input into a `TimerSpec`, naming each failing field. */
export function parseTimerSpec(input: unknown): TimerSpecParseResult {
  const parsed = TimerSpec.safeParse(input);
  if (parsed.success) return { ok: true, spec: parsed.data };
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  const message = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ");
  return { ok: false, code: "invalid_timer_spec", message, issues };
}

/** Number of interval slots `anchor + k·period` (k ≥ 0) at or before `at`. */
function slotsUpTo(anchor: number, period: number, at: number): number {
  return at < anchor ? 0 : Math.floor((at - anchor) / period) + 1;
}

/**
 * The first slot strictly after `afterMs`, or null when the timer has no further slot (an elapsed
 * `once`). An interval without `anchorAt` is relative: its next slot is `afterMs + everySeconds`.
 * Throws on a spec that `TimerSpec` would reject — parse at the edge.
 */
export function nextRunAt(spec: TimerSpec, afterMs: number): number | null {
  switch (spec.kind) {
    case "cron": {
      const next = nextCronOccurrence(spec.expr, spec.timeZone, afterMs);
      if (next.ok) return next.at;
      if (next.code === "no_occurrence") return null;
      throw new RangeError(next.message);
    }
    case "interval": {
      const period = spec.everySeconds * 1000;
      if (spec.anchorAt === undefined) return afterMs + period;
      return spec.anchorAt + slotsUpTo(spec.anchorAt, period, afterMs) * period;
    }
    case "once":
      return spec.at > afterMs ? spec.at : null;
  }
}

/**
 * The `nextRunAt` to persist when a timer is created: like `nextRunAt(spec, nowMs)`, except that a
 * `once` in the past stays due (it fires on the next alarm if still inside the catch-up window).
 */
export function initialNextRunAt(spec: TimerSpec, nowMs: number): number | null {
  return spec.kind === "once" ? spec.at : nextRunAt(spec, nowMs);
}

interface DueSlots {
  count: number;
  capped: boolean;
  last: number;
  advanced: number | null;
}

/** Slots due in `[first, now]`, where `first` (the persisted nextRunAt) counts as a slot itself. */
function dueSlots(spec: TimerSpec, first: number, now: number): DueSlots {
  const cap = MAX_COUNTED_MISSED_SLOTS;
  switch (spec.kind) {
    case "interval": {
      // Without an anchor the persisted nextRunAt is the grid, so a late alarm never drifts it.
      const period = spec.everySeconds * 1000;
      const anchor = spec.anchorAt ?? first;
      const upToNow = slotsUpTo(anchor, period, now);
      const later = upToNow - slotsUpTo(anchor, period, first);
      const last = later > 0 ? anchor + (upToNow - 1) * period : first;
      return { count: Math.min(1 + later, cap), capped: 1 + later > cap, last, advanced: anchor + upToNow * period };
    }
    case "once": {
      const later = spec.at > first && spec.at <= now;
      return { count: later ? 2 : 1, capped: false, last: later ? spec.at : first, advanced: spec.at > now ? spec.at : null };
    }
    case "cron": {
      let count = 1;
      let last = first;
      for (const at of cronOccurrences(spec.expr, spec.timeZone, first)) {
        if (at > now) return { count, capped: false, last, advanced: at };
        if (count === cap) {
          const previous = previousCronOccurrence(spec.expr, spec.timeZone, now);
          return { count, capped: true, last: previous.ok ? Math.max(previous.at, last) : last, advanced: nextRunAt(spec, now) };
        }
        count += 1;
        last = at;
      }
      return { count, capped: false, last, advanced: null };
    }
  }
}

export interface PlanDueTimerInput {
  spec: TimerSpec;
  /** The persisted next slot; it counts as the first due slot when `<= nowMs`. */
  nextRunAt: number;
  nowMs: number;
  catchupWindowSeconds?: number;
  catchupPolicy?: CatchupPolicy;
}

interface DecisionBase {
  evaluatedAt: number;
  previousNextRunAt: number;
  /** What to persist as the timer's nextRunAt: strictly after `evaluatedAt`, or null when exhausted. */
  advancedNextRunAt: number | null;
  catchupPolicy: CatchupPolicy;
  catchupWindowSeconds: number;
}

interface MissedSlots {
  /** Due slots from `firstMissedAt` through `lastMissedAt`; a floor when `missedCountCapped`. */
  missedCount: number;
  missedCountCapped: boolean;
  firstMissedAt: number;
  lastMissedAt: number;
}

/**
 * A scheduler decision record; plain JSON data.
 * - `wait`: not due; `reschedule` when the persisted slot lies beyond the spec's next slot (clock moved back);
 * - `fire`: exactly one slot due → one `timer` wake keyed by `scheduledAt`;
 * - `catchup`: several slots due → ONE `recoveryCatchup` wake keyed by `scheduledAt` (= `lastMissedAt`);
 * - `skip`: due slots dropped (`policy_skip`, or the newest is older than the window).
 */
export type TimerDecision =
  | (DecisionBase & { action: "wait" })
  | (DecisionBase & { action: "reschedule"; reason: "clock_moved_backwards" })
  | (DecisionBase & { action: "fire"; wakeReason: "timer"; scheduledAt: number })
  | (DecisionBase & MissedSlots & { action: "catchup"; wakeReason: "recoveryCatchup"; cause: "timer"; scheduledAt: number })
  | (DecisionBase & MissedSlots & { action: "skip"; reason: "policy_skip" | "outside_catchup_window" });

/**
 * Decides what a timer does at `nowMs`. Any downtime, however many slots it spans, yields one
 * decision and at most one wake; `advancedNextRunAt` then points past `nowMs`, so re-planning with it waits.
 * Throws RangeError for out-of-range settings (bugs: settings are validated by `TimerCatchup`).
 */
export function planDueTimer(input: PlanDueTimerInput): TimerDecision {
  const { spec, nowMs } = input;
  const catchupPolicy = input.catchupPolicy ?? "coalesce";
  const catchupWindowSeconds = input.catchupWindowSeconds ?? DEFAULT_CATCHUP_WINDOW_SECONDS;
  if (!CATCHUP_POLICIES.includes(catchupPolicy)) throw new RangeError(`catchupPolicy must be one of ${CATCHUP_POLICIES.join(", ")}`);
  if (!Number.isInteger(catchupWindowSeconds) || catchupWindowSeconds < 1) throw new RangeError("catchupWindowSeconds must be an integer >= 1");
  if (!Number.isFinite(nowMs) || !Number.isFinite(input.nextRunAt)) throw new RangeError("nowMs and nextRunAt must be finite");

  const base = { evaluatedAt: nowMs, previousNextRunAt: input.nextRunAt, catchupPolicy, catchupWindowSeconds };
  if (input.nextRunAt > nowMs) {
    const expected = spec.kind === "interval" && spec.anchorAt === undefined ? nowMs + spec.everySeconds * 1000 : nextRunAt(spec, nowMs);
    if (expected !== null && expected < input.nextRunAt) {
      return { ...base, action: "reschedule", reason: "clock_moved_backwards", advancedNextRunAt: expected };
    }
    return { ...base, action: "wait", advancedNextRunAt: input.nextRunAt };
  }

  const due = dueSlots(spec, input.nextRunAt, nowMs);
  const withBase = { ...base, advancedNextRunAt: due.advanced };
  const missed: MissedSlots = {
    missedCount: due.count,
    missedCountCapped: due.capped,
    firstMissedAt: input.nextRunAt,
    lastMissedAt: due.last,
  };
  if (nowMs - due.last > catchupWindowSeconds * 1000) return { ...withBase, ...missed, action: "skip", reason: "outside_catchup_window" };
  if (due.count === 1) return { ...withBase, action: "fire", wakeReason: "timer", scheduledAt: input.nextRunAt };
  if (catchupPolicy === "skip") return { ...withBase, ...missed, action: "skip", reason: "policy_skip" };
  return { ...withBase, ...missed, action: "catchup", wakeReason: "recoveryCatchup", cause: "timer", scheduledAt: due.last };
}
