/**
 * Bench only (VIGIL_BENCH=enabled): counts every SQL statement one Durable Object runs — ours through drizzle and
 * lean queries, the Agents SDK's own — so `npm run bench` reports statements per chat turn beside bytes and rows
 * (issue 12 §8: a turn is CPU-bound, and SQLite statements are the largest part). Production never wraps.
 */
/** The one method of a Durable Object's `SqlStorage` the meter touches (structural: unit tests run without workers types). */
export interface Executes {
  exec: (query: string, ...bindings: never[]) => unknown;
}

const tallies = new WeakMap<Executes, { statements: number }>();

/** Wraps `sql.exec` of this object's storage so that each call is counted; idempotent. */
export function meterStatements(sql: Executes): void {
  if (tallies.has(sql)) return;
  const tally = { statements: 0 };
  const exec = sql.exec.bind(sql);
  sql.exec = (query, ...bindings) => {
    tally.statements++;
    return exec(query, ...bindings);
  };
  tallies.set(sql, tally);
}

/** Statements run since the object started, or null when it is not metered. */
export function statementsRun(sql: Executes): number | null {
  return tallies.get(sql)?.statements ?? null;
}

/** Runs `read` without counting its statements (the bench's own footprint reads are not a turn's work). */
export function uncounted<T>(sql: Executes, read: () => T): T {
  const tally = tallies.get(sql);
  const before = tally?.statements ?? 0;
  try {
    return read();
  } finally {
    if (tally) tally.statements = before;
  }
}
