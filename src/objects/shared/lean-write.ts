import { is, Param, Placeholder } from "drizzle-orm";

/** What `leanRun` needs of a drizzle prepared write (durable-sqlite's `SQLiteDOPreparedQuery`). */
interface PreparedWrite {
  run(values?: Record<string, unknown>): unknown;
}

interface PreparedInternals {
  client: { sql: { exec(query: string, ...params: unknown[]): unknown } };
  query: { sql: string; params: unknown[] };
}

/**
 * A drizzle prepared write (an insert, update or delete without RETURNING) run without drizzle's per-call work
 * (issue 12 §8, session 11): its `run` classifies every parameter with `is()` on every call to fill the
 * placeholders. Here each parameter's binding is decided once — a placeholder read from the values, a placeholder
 * in a column's Param encoded by that column (json stringified), anything else the value drizzle rendered — so a
 * call is one `sql.exec` with the same SQL and the same bound values as drizzle's `run`. Like drizzle's, the cursor
 * is not read (a write without RETURNING has no rows).
 */
export function leanRun(prepared: PreparedWrite): { run(values?: Record<string, unknown>): void } {
  const { client, query } = prepared as unknown as PreparedInternals;
  const text = query.sql;
  const params = query.params.map((param): ((values: Record<string, unknown>) => unknown) => {
    if (is(param, Placeholder)) return (values) => placeholderValue(values, param.name);
    if (is(param, Param) && is(param.value, Placeholder)) {
      const { encoder, value } = param;
      return (values) => encoder.mapToDriverValue(placeholderValue(values, value.name));
    }
    return () => param;
  });
  return {
    run: (values = {}) => {
      client.sql.exec(text, ...params.map((param) => param(values)));
    },
  };
}

function placeholderValue(values: Record<string, unknown>, name: string): unknown {
  if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`);
  return values[name];
}
