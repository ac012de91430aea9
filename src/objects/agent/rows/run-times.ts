/**
 * Issue 12 §6 (bytes per turn, session 7): a run's `started_at` and `ended_at` are stored as `+<ms>`, milliseconds after
 * its `enqueued_at` (which stays in full: the runs list pages by it), instead of a second and third 24-byte timestamp.
 * Only when that reads back as the very same string; rows stored before, and any other value, keep the timestamp,
 * which never starts with "+". `toRun` is the one reader (records.ts).
 */
const RELATIVE = "+";

/** What to store for `iso` in a run row enqueued at `enqueuedAt`. */
export function storedRunTime(iso: string, enqueuedAt: string): string {
  const base = Date.parse(enqueuedAt);
  const ms = Date.parse(iso);
  if (!Number.isFinite(base) || !Number.isFinite(ms) || ms < base) return iso;
  const stored = `${RELATIVE}${ms - base}`;
  return runTimeOf(stored, enqueuedAt) === iso ? stored : iso;
}

/** The timestamp a run row's `started_at` / `ended_at` column says. */
export function runTimeOf(stored: string | null, enqueuedAt: string): string | null {
  if (stored === null || !stored.startsWith(RELATIVE)) return stored;
  return new Date(Date.parse(enqueuedAt) + Number(stored.slice(RELATIVE.length))).toISOString();
}
