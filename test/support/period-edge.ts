export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/**
 * When the clock is within `marginMs` of the next edge of a clock-aligned period (a UTC minute, a UTC day; the Rate
 * Limiting binding counts fixed 60 s periods aligned to the wall clock), waits until the edge has passed; returns at
 * once otherwise. A scenario that counts inside one period (a per-minute limit, a daily budget) then runs inside a
 * single period instead of straddling an edge and seeing the count reset midway. Pure: shared by the integration
 * tests (workerd) and the e2e tests (Node).
 */
export async function clearOfPeriodEdge(periodMs: number, marginMs: number): Promise<void> {
  const untilEdge = periodMs - (Date.now() % periodMs);
  if (untilEdge < marginMs) await new Promise((resolve) => setTimeout(resolve, untilEdge + 50));
}
