/**
 * 5-field cron (`minute hour day-of-month month day-of-week`) evaluated in an IANA time zone
 * (DST-correct). Pure: the only ambient dependency is `Intl.DateTimeFormat`,
 * present in Workers and Node.
 *
 * DST rules (seed 000 "Timer recovery semantics": wall-clock intent is preserved):
 * - a wall time inside a spring-forward gap fires at the first valid instant after the gap
 *   (`30 2 * * *` on a 02:00→03:00 day fires at 03:00 local); several gap times collapse into that one instant;
 * - a wall time repeated by a fall-back fires once, at its first occurrence.
 */
export const CRON_FIELDS = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
export type CronField = (typeof CRON_FIELDS)[number];

/** A parsed expression: each field as its sorted, unique allowed values (day-of-week 0–6, 0 = Sunday). */
export interface CronSchedule {
  readonly expression: string;
  readonly minute: readonly number[];
  readonly hour: readonly number[];
  readonly dayOfMonth: readonly number[];
  readonly month: readonly number[];
  readonly dayOfWeek: readonly number[];
  /**
   * A day field is restricted unless it selects every value (`*`, `1-31`, `0-7`…). When both are
   * restricted a day matches if EITHER does (standard cron OR); otherwise the restricted one decides.
   * Unlike Vixie's "text starts with `*`" quirk, a stepped wildcard (every 2nd day) counts as
   * restricted, so the rule never silently ANDs two real restrictions.
   */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

export type CronParseResult =
  | { ok: true; schedule: CronSchedule }
  | { ok: false; code: "cron_invalid"; field: CronField | null; message: string };

export type CronNextResult =
  | { ok: true; at: number }
  | { ok: false; code: "cron_invalid" | "timezone_invalid" | "instant_out_of_range" | "no_occurrence"; field?: CronField | null; message: string };

/** Local wall-clock reading of an instant in a time zone; `month` 1–12, `dayOfWeek` 0 = Sunday. */
export interface WallClock {
  year: number; month: number; day: number; hour: number; minute: number; second: number; dayOfWeek: number;
}

/** Instants accepted by the evaluator: 1970-01-01 through 9999-12-31 UTC. */
export const MAX_CRON_INSTANT_MS = 253_402_300_799_999;
const MAX_EXPRESSION_LENGTH = 256;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
// After the never-fires check in parseCron the sparsest schedule (Feb 29) recurs within 8 years:
// with only one day field restricted there is no weekday constraint to stretch the cycle.
const HORIZON_DAYS = 366 * 9;

const MONTH_NAMES = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
// Names count from the field's minimum: JAN = 1, SUN = 0.
const BOUNDS: Record<CronField, { min: number; max: number; names?: string[] }> = {
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  "day-of-month": { min: 1, max: 31 },
  month: { min: 1, max: 12, names: MONTH_NAMES },
  "day-of-week": { min: 0, max: 7, names: DAY_NAMES },
};
const MAX_DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

type FieldResult = { ok: true; values: number[] } | { ok: false; message: string };

function parseValue(field: CronField, token: string): { ok: true; value: number } | { ok: false; message: string } {
  const { min, max, names } = BOUNDS[field];
  if (/^\d+$/.test(token)) {
    const value = Number(token);
    if (value < min || value > max) return { ok: false, message: `cron field '${field}' value ${token} out of range ${min}-${max}` };
    return { ok: true, value };
  }
  const index = names?.indexOf(token.toUpperCase()) ?? -1;
  if (index >= 0) return { ok: true, value: index + min };
  return { ok: false, message: `cron field '${field}' has invalid value '${token}'` };
}

function parseField(field: CronField, text: string): FieldResult {
  const { min, max } = BOUNDS[field];
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const [rangeText = "", stepText, extra] = item.split("/");
    if (extra !== undefined) return { ok: false, message: `cron field '${field}' item '${item}' has more than one '/'` };
    if (rangeText === "") return { ok: false, message: `cron field '${field}' has an empty item in '${text}'` };
    let step = 1;
    if (stepText !== undefined) {
      step = /^\d+$/.test(stepText) ? Number(stepText) : NaN;
      if (!(step >= 1 && step <= max - min + 1)) {
        return { ok: false, message: `cron field '${field}' step '${stepText}' must be an integer 1-${max - min + 1}` };
      }
    }
    let lo = min;
    let hi = field === "day-of-week" ? 6 : max;
    if (rangeText !== "*") {
      const bounds = rangeText.split("-");
      if (bounds.length > 2) return { ok: false, message: `cron field '${field}' range '${rangeText}' is malformed` };
      const first = parseValue(field, bounds[0] ?? "");
      if (!first.ok) return first;
      lo = first.value;
      // Vixie `5/15` means "from 5 to the end, every 15".
      hi = stepText !== undefined ? max : lo;
      if (bounds.length === 2) {
        const last = parseValue(field, bounds[1] ?? "");
        if (!last.ok) return last;
        hi = last.value;
        if (lo > hi) return { ok: false, message: `cron field '${field}' range '${rangeText}' runs backwards` };
      }
    }
    for (let value = lo; value <= hi; value += step) values.add(field === "day-of-week" ? value % 7 : value);
  }
  return { ok: true, values: [...values].sort((a, b) => a - b) };
}

/** Parses and validates a 5-field expression; errors name the failing field. Names (JAN, MON) are case-insensitive. */
export function parseCron(expression: string): CronParseResult {
  const fail = (field: CronField | null, message: string): CronParseResult => ({ ok: false, code: "cron_invalid", field, message });
  if (typeof expression !== "string") return fail(null, "cron expression must be a string");
  if (expression.length > MAX_EXPRESSION_LENGTH) return fail(null, `cron expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const texts = expression.trim().split(/\s+/).filter((text) => text !== "");
  if (texts.length !== 5) {
    return fail(null, `cron expression must have 5 fields (minute hour day-of-month month day-of-week), got ${texts.length}`);
  }
  const parsed: number[][] = [];
  for (const [index, field] of CRON_FIELDS.entries()) {
    const result = parseField(field, texts[index] ?? "");
    if (!result.ok) return fail(field, result.message);
    parsed.push(result.values);
  }
  const [minute = [], hour = [], dayOfMonth = [], month = [], dayOfWeek = []] = parsed;
  const schedule: CronSchedule = {
    expression: texts.join(" "),
    minute,
    hour,
    dayOfMonth,
    month,
    dayOfWeek,
    dayOfMonthRestricted: dayOfMonth.length < 31,
    dayOfWeekRestricted: dayOfWeek.length < 7,
  };
  if (schedule.dayOfMonthRestricted && !schedule.dayOfWeekRestricted) {
    const firstDay = dayOfMonth[0] ?? 1;
    if (!month.some((m) => (MAX_DAYS_IN_MONTH[m - 1] ?? 0) >= firstDay)) {
      return fail("day-of-month", `cron field 'day-of-month' value ${firstDay} never occurs in the selected month(s), so the expression never fires`);
    }
  }
  return { ok: true, schedule };
}

function dayMatches(schedule: CronSchedule, month: number, dayOfMonth: number, dayOfWeek: number): boolean {
  if (!schedule.month.includes(month)) return false;
  const domOk = schedule.dayOfMonth.includes(dayOfMonth);
  const dowOk = schedule.dayOfWeek.includes(dayOfWeek);
  if (schedule.dayOfMonthRestricted && schedule.dayOfWeekRestricted) return domOk || dowOk;
  return domOk && dowOk;
}

/** True when a wall-clock reading (seconds ignored) is one the expression selects. */
export function cronMatchesWallClock(schedule: CronSchedule, wall: WallClock): boolean {
  return (
    schedule.minute.includes(wall.minute) &&
    schedule.hour.includes(wall.hour) &&
    dayMatches(schedule, wall.month, wall.day, wall.dayOfWeek)
  );
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // Throws RangeError for an unknown zone, so only valid zones are ever cached.
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `Intl` knows this IANA time zone (e.g. `Europe/Berlin`, `UTC`). */
export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== "string" || timeZone === "") return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Wall clock as "milliseconds since epoch if the reading were UTC", at second precision. */
function wallMsAt(utcMs: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(utcMs)) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  // Some engines still render midnight as hour 24 despite h23.
  const hour = (fields.hour ?? 0) % 24;
  return Date.UTC(fields.year ?? 1970, (fields.month ?? 1) - 1, fields.day ?? 1, hour, fields.minute ?? 0, fields.second ?? 0);
}

function offsetAt(utcMs: number, timeZone: string): number {
  return wallMsAt(utcMs, timeZone) - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

/** The wall-clock reading of `utcMs` in `timeZone` (throws RangeError for an unknown zone). */
export function wallClockAt(utcMs: number, timeZone: string): WallClock {
  const wall = new Date(wallMsAt(utcMs, timeZone));
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    hour: wall.getUTCHours(),
    minute: wall.getUTCMinutes(),
    second: wall.getUTCSeconds(),
    dayOfWeek: wall.getUTCDay(),
  };
}

/**
 * The instant a wall time fires at: its first occurrence, or the end of the gap that swallowed it.
 * `before`/`after` are the zone offsets a day either side of the local day; this assumes at most one
 * offset transition within those three days, which holds for every tzdb zone since 1970.
 */
function resolveWall(wall: number, timeZone: string, before: number, after: number): number {
  if (before === after) return wall - before;
  const candidates = [wall - before, wall - after].filter((utc) => wallMsAt(utc, timeZone) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  let lo = Math.min(wall - before, wall - after);
  let hi = Math.max(wall - before, wall - after);
  const offsetBefore = offsetAt(lo, timeZone);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetAt(mid, timeZone) === offsetBefore) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * Walks matching days (then hours, then minutes) from `fromWall` in `direction`, yielding each
 * candidate's firing instant. Instants are monotone in the wall time, which callers rely on.
 */
function* firingInstants(schedule: CronSchedule, timeZone: string, fromWall: number, direction: 1 | -1): Generator<number> {
  const hours = direction === 1 ? schedule.hour : [...schedule.hour].reverse();
  const minutes = direction === 1 ? schedule.minute : [...schedule.minute].reverse();
  const firstDay = Math.floor(fromWall / DAY) * DAY;
  for (let i = 0; i <= HORIZON_DAYS; i++) {
    const day = firstDay + direction * i * DAY;
    if (day < -DAY || day > MAX_CRON_INSTANT_MS + DAY) return;
    const date = new Date(day);
    if (!dayMatches(schedule, date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCDay())) continue;
    const before = offsetAt(day - DAY, timeZone);
    const after = offsetAt(day + 2 * DAY, timeZone);
    for (const hour of hours) {
      for (const minute of minutes) {
        const wall = day + hour * HOUR + minute * MINUTE;
        if (direction === 1 ? wall < fromWall - MINUTE : wall > fromWall) continue;
        yield resolveWall(wall, timeZone, before, after);
      }
    }
  }
}

type Prepared = { ok: true; schedule: CronSchedule } | Extract<CronNextResult, { ok: false }>;

function prepare(expr: string | CronSchedule, timeZone: string, instant: number): Prepared {
  const parsed = typeof expr === "string" ? parseCron(expr) : { ok: true as const, schedule: expr };
  if (!parsed.ok) return parsed;
  if (!isValidTimeZone(timeZone)) return { ok: false, code: "timezone_invalid", message: `timeZone '${timeZone}' is not a valid IANA time zone` };
  if (!Number.isFinite(instant) || instant < 0 || instant > MAX_CRON_INSTANT_MS) {
    return { ok: false, code: "instant_out_of_range", message: `instant ${instant} is outside 1970-01-01..9999-12-31 UTC` };
  }
  return parsed;
}

/**
 * Strictly increasing firing instants after `afterUtcMs`, lazily: callers cap how many they take.
 * Throws on an invalid expression, zone or instant (validate with `parseCron`/`isValidTimeZone` first).
 */
export function* cronOccurrences(expr: string | CronSchedule, timeZone: string, afterUtcMs: number): Generator<number> {
  const prepared = prepare(expr, timeZone, afterUtcMs);
  if (!prepared.ok) throw new RangeError(prepared.message);
  let last = afterUtcMs;
  for (const at of firingInstants(prepared.schedule, timeZone, wallMsAt(afterUtcMs, timeZone), 1)) {
    if (at > last && at <= MAX_CRON_INSTANT_MS) {
      yield at;
      last = at;
    }
  }
}

/** The first firing instant strictly after `afterUtcMs` (UTC ms), DST rules as in the module doc. */
export function nextCronOccurrence(expr: string | CronSchedule, timeZone: string, afterUtcMs: number): CronNextResult {
  const prepared = prepare(expr, timeZone, afterUtcMs);
  if (!prepared.ok) return prepared;
  for (const at of cronOccurrences(prepared.schedule, timeZone, afterUtcMs)) return { ok: true, at };
  return { ok: false, code: "no_occurrence", message: `cron '${prepared.schedule.expression}' has no occurrence after ${afterUtcMs}` };
}

/** The last firing instant at or before `atOrBeforeUtcMs` (`no_occurrence` when none since 1970). */
export function previousCronOccurrence(expr: string | CronSchedule, timeZone: string, atOrBeforeUtcMs: number): CronNextResult {
  const prepared = prepare(expr, timeZone, atOrBeforeUtcMs);
  if (!prepared.ok) return prepared;
  // A fall-back overlap lets wall times later than the current reading resolve to earlier instants.
  const fromWall = wallMsAt(atOrBeforeUtcMs, timeZone) + DAY;
  for (const at of firingInstants(prepared.schedule, timeZone, fromWall, -1)) {
    if (at <= atOrBeforeUtcMs && at >= 0) return { ok: true, at };
  }
  return { ok: false, code: "no_occurrence", message: `cron '${prepared.schedule.expression}' has no occurrence before ${atOrBeforeUtcMs}` };
}
