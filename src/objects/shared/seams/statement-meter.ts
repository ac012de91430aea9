/**
 * Bench and statement-counting tests only: counts every SQL statement one Durable Object runs — ours through drizzle
 * and plain SQL, the Agents SDK's own — and the rows each statement's cursor reports as read and written (what
 * Cloudflare bills on SQLite-backed Durable Objects: every index entry and every FTS shadow row written counts), so
 * `npm run bench` reports statements and billed rows per unit of work. Production never wraps.
 */
/** The one method of a Durable Object's `SqlStorage` the meter touches (structural: unit tests run without workers types). */
export interface Executes {
  exec: (query: string, ...bindings: never[]) => unknown;
}

/** Billed rows of the statements aimed at one table (the table an INSERT/UPDATE/DELETE writes, else the first FROM). */
export interface TableRows {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

/** What one object ran since it was metered. */
export interface BilledRows extends TableRows {
  byTable: Record<string, TableRows>;
}

interface Cursorish {
  rowsRead?: number;
  rowsWritten?: number;
}

interface Tally {
  statements: number;
  /** Cursors not yet folded into `byTable`: a cursor's counts grow while it is consumed, so they are read late. */
  open: { table: string; cursor: Cursorish }[];
  byTable: Map<string, TableRows>;
}

const tallies = new WeakMap<Executes, Tally>();

const WRITE_TARGET = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+["`[]?(\w+)/i;
const READ_SOURCE = /\bFROM\s+["`[]?(\w+)/i;

/** The table a statement is charged to: the one it writes, else the first it reads, else its leading keyword. */
export function statementTable(query: string): string {
  const match = WRITE_TARGET.exec(query) ?? READ_SOURCE.exec(query);
  if (match?.[1]) return match[1];
  return `(${(/^\s*(\w+)/.exec(query)?.[1] ?? "?").toUpperCase()})`;
}

/** Wraps `sql.exec` of this object's storage so that each call and its cursor's rows are counted; idempotent. */
export function meterStatements(sql: Executes): void {
  if (tallies.has(sql)) return;
  const tally: Tally = { statements: 0, open: [], byTable: new Map() };
  const exec = sql.exec.bind(sql);
  sql.exec = (query, ...bindings) => {
    tally.statements++;
    const cursor = exec(query, ...bindings);
    if (cursor && typeof cursor === "object") tally.open.push({ table: statementTable(query), cursor: cursor as Cursorish });
    return cursor;
  };
  tallies.set(sql, tally);
}

/** Statements run since the object started, or null when it is not metered. */
export function statementsRun(sql: Executes): number | null {
  return tallies.get(sql)?.statements ?? null;
}

function fold(tally: Tally): void {
  for (const { table, cursor } of tally.open) {
    const entry = tally.byTable.get(table) ?? { statements: 0, rowsRead: 0, rowsWritten: 0 };
    entry.statements++;
    entry.rowsRead += cursor.rowsRead ?? 0;
    entry.rowsWritten += cursor.rowsWritten ?? 0;
    tally.byTable.set(table, entry);
  }
  tally.open = [];
}

/** Billed rows read and written since the object was metered, per table and in all; null when it is not metered. */
export function billedRows(sql: Executes): BilledRows | null {
  const tally = tallies.get(sql);
  if (!tally) return null;
  fold(tally);
  const byTable = Object.fromEntries([...tally.byTable].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]));
  const sum = (key: keyof TableRows) => Object.values(byTable).reduce((total, entry) => total + entry[key], 0);
  return { statements: sum("statements"), rowsRead: sum("rowsRead"), rowsWritten: sum("rowsWritten"), byTable };
}

/** Runs `read` without counting its statements or rows (the bench's own footprint reads are not a unit's work). */
export function uncounted<T>(sql: Executes, read: () => T): T {
  const tally = tallies.get(sql);
  if (tally) fold(tally);
  const before = tally?.statements ?? 0;
  try {
    return read();
  } finally {
    if (tally) {
      tally.statements = before;
      tally.open = [];
    }
  }
}
