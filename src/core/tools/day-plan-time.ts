/**
 * Day-plan block times (`upsert_day_plan_blocks`): tools speak ISO instants with an offset,
 * the journal stores a block as a wall-clock `HH:MM` range on the plan's date. The tenant's time
 * zone joins the two: an instant maps to its local time on `planDate` (whole minutes; another
 * local day is refused), and a stored `HH:MM` maps back to an instant with that zone's offset.
 */
import { wallClockAt } from "../wakes/cron";

export type BlockClock = { ok: true; clock: string } | { ok: false; message: string };

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/** The local `HH:MM` of `instant` in `timeZone`, which must fall on `planDate` at a whole minute. */
export function blockClock(instant: string, planDate: string, timeZone: string): BlockClock {
  const ms = Date.parse(instant);
  if (!Number.isFinite(ms)) return { ok: false, message: `${instant} is not an ISO-8601 instant` };
  const wall = wallClockAt(ms, timeZone);
  const date = `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;
  if (date !== planDate) return { ok: false, message: `${instant} is on ${date} in ${timeZone}, not on the plan's date ${planDate}` };
  if (wall.second !== 0 || ms % 1000 !== 0) return { ok: false, message: `${instant} is not a whole minute` };
  return { ok: true, clock: `${pad(wall.hour)}:${pad(wall.minute)}` };
}

/** `HH:MM` on `planDate` in `timeZone` as ISO-8601 with the zone's offset, e.g. `2026-02-18T09:00:00-05:00`. */
export function zonedInstant(planDate: string, clock: string, timeZone: string): string {
  const [y, m, d] = planDate.split("-").map(Number) as [number, number, number];
  const [hh, mm] = clock.split(":").map(Number) as [number, number];
  const wall = Date.UTC(y, m - 1, d, hh, mm);
  const offsetAt = (utc: number) => {
    const w = wallClockAt(utc, timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - utc;
  };
  // Two fixed-point steps settle the offset, also next to a DST change.
  const first = wall - offsetAt(wall);
  const utc = wall - offsetAt(first);
  const offset = Math.round((wall - utc) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${planDate}T${clock}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
