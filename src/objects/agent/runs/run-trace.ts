import { and, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { nowIso, handWritten } from "../../shared/sqlite";
import { inList } from "../../shared/statements/sql-in";
import { runTraceRows, traceEntriesOf, type TraceEntry, unfoldEntries } from "../rows";
import type { AgentDb } from "../types";

import type { AttemptEntry, PolicyEntry, RunTraceKind, SagaEntry, UsageEntry } from "../../../core/runtime/run-trace-entries";

export type { AttemptEntry, PolicyEntry, RunTraceKind, SagaEntry, UsageEntry };

const r = schema.runs;
const t = schema.runTrace;
const RUN_ROW = (db: AgentDb) => db.select({ trace: r.trace, enqueuedAt: r.enqueuedAt }).from(r).where(eq(r.runKey, sql.placeholder("runKey"))).prepare();
// seq numbers the run's rows (the key is (run_key, seq), so the run key is stored once per row).
const INSERT_ROW = (db: AgentDb) => {
  const seq = sql<number>`(SELECT coalesce(max(${t.seq}), 0) + 1 FROM ${t} WHERE ${t.runKey} = ${sql.placeholder("runKey")})`;
  return db.insert(t).values({ runKey: sql.placeholder("runKey"), seq, kind: sql.placeholder("kind"), data: sql.placeholder("data"), createdAt: sql.placeholder("createdAt") }).prepare();
};

/**
 * A successful model call's attempt row and usage row in one statement: the run's next two seqs from one read of its highest, the attempt's first, so the
 * rows are those two `add`s would write. An INSERT whose SELECT reads the target table has the SELECT computed in full
 * before the first row goes in, so both rows number from the same highest seq.
 */
const INSERT_SUCCEEDED = handWritten((v) => {
  return sql`INSERT INTO ${t} (${sql.identifier(t.runKey.name)}, ${sql.identifier(t.seq.name)}, ${sql.identifier(t.kind.name)}, ${sql.identifier(t.data.name)}, ${sql.identifier(t.createdAt.name)})
    SELECT ${v.runKey}, "last"."seq" + "row"."n", "row"."kind", "row"."data", ${v.createdAt}
    FROM (SELECT coalesce(max(${t.seq}), 0) AS "seq" FROM ${t} WHERE ${t.runKey} = ${v.runKey}) AS "last"
    CROSS JOIN (SELECT 1 AS "n", 'attempt' AS "kind", ${v.attempt} AS "data" UNION ALL SELECT 2, 'usage', ${v.usage}) AS "row"
    ORDER BY "row"."n"`;
});

/**
 * Append-only trace rows of a run, written as things happen (a run parked on a saga or cut short by
 * a crash keeps them). The run record shows them grouped: `attempts`, `policy`, `usage` totals.
 */
export class RunTrace {
  private readonly runRow;
  private readonly tableRows;
  /** A row added (attempts and usage on every model call): built once (session 11), the run's next seq read inside it. */
  private readonly insertRow;
  private readonly insertSucceeded;

  constructor(private readonly db: AgentDb) {
    this.runRow = RUN_ROW(db);
    this.tableRows = runTraceRows(db);
    this.insertRow = INSERT_ROW(db);
    this.insertSucceeded = INSERT_SUCCEEDED(db);
  }

  attempt(runKey: string, entry: AttemptEntry): void {
    this.add(runKey, "attempt", { ...entry });
  }

  policy(runKey: string, entry: PolicyEntry): void {
    this.add(runKey, "policy", { ...entry });
  }

  usage(runKey: string, entry: UsageEntry): void {
    this.add(runKey, "usage", { ...entry });
  }

  /** `attempt` then `usage`, in one statement (the same two rows: json as drizzle stores it, one time for both). */
  succeeded(runKey: string, attempt: AttemptEntry, usage: UsageEntry): void {
    this.insertSucceeded.run({ runKey, attempt: JSON.stringify({ ...attempt }), usage: JSON.stringify({ ...usage }), createdAt: nowIso() });
  }

  saga(runKey: string, entry: SagaEntry): void {
    this.add(runKey, "saga", { ...entry });
  }

  /**
   * Every row of a run in order (the trace export reads them): those folded into the run row when it ended (issue 12
   * §6, folded-trace.ts), then any still in `run_trace` (a run not yet ended, or a row written after it ended).
   */
  rows(runKey: string): TraceEntry[] {
    return traceEntriesOf(this.runRow.get({ runKey }), this.tableRows.all({ runKey }));
  }

  /** The grouped view merged into `Run.trace`. */
  view(runKey: string): { attempts: Record<string, unknown>[]; policy: Record<string, unknown>[]; usage: { inputTokens: number; outputTokens: number; costMicros: number; calls: number } } {
    const attempts: Record<string, unknown>[] = [];
    const policy: Record<string, unknown>[] = [];
    const usage = { inputTokens: 0, outputTokens: 0, costMicros: 0, calls: 0 };
    for (const row of this.rows(runKey)) {
      const entry = { ...row.data, at: row.createdAt };
      if (row.kind === "attempt") attempts.push(entry);
      else if (row.kind === "policy") policy.push(entry);
      else if (row.kind === "usage") addUsage(usage, row.data);
    }
    return { attempts, policy, usage };
  }

  /** Usage totals of many runs (the runs list): the `run_trace` rows summed in SQL, plus the rows folded into the run rows. */
  usageTotals(runKeys: string[]): Map<string, Usage> {
    const t = schema.runTrace;
    const totals = new Map<string, Usage>(
      this.db
        .select({
          runKey: t.runKey,
          input: sql<number>`coalesce(sum(json_extract(${t.data}, '$.inputTokens')), 0)`,
          output: sql<number>`coalesce(sum(json_extract(${t.data}, '$.outputTokens')), 0)`,
          cost: sql<number>`coalesce(sum(json_extract(${t.data}, '$.costMicros')), 0)`,
          n: sql<number>`count(*)`,
        })
        .from(t)
        .where(and(inList(t.runKey, runKeys), eq(t.kind, "usage")))
        .groupBy(t.runKey)
        .all()
        .map((row) => [row.runKey, { inputTokens: Number(row.input), outputTokens: Number(row.output), costMicros: Number(row.cost), calls: Number(row.n) }]),
    );
    const r = schema.runs;
    for (const run of this.db.select({ runKey: r.runKey, trace: r.trace, enqueuedAt: r.enqueuedAt }).from(r).where(inList(r.runKey, runKeys)).all()) {
      const folded = unfoldEntries(run.trace, run).filter((entry) => entry.kind === "usage");
      if (folded.length === 0) continue;
      const usage = totals.get(run.runKey) ?? { inputTokens: 0, outputTokens: 0, costMicros: 0, calls: 0 };
      for (const entry of folded) addUsage(usage, entry.data);
      totals.set(run.runKey, usage);
    }
    return totals;
  }

  private add(runKey: string, kind: RunTraceKind, data: Record<string, unknown>): void {
    this.insertRow.run({ runKey, kind, data, createdAt: nowIso() });
  }
}

type Usage = { inputTokens: number; outputTokens: number; costMicros: number; calls: number };

/** One usage row added to a total (as the SQL sum counts it: a missing number adds nothing). */
function addUsage(usage: Usage, data: Record<string, unknown>): void {
  const entry = data as Partial<UsageEntry>;
  usage.inputTokens += entry.inputTokens ?? 0;
  usage.outputTokens += entry.outputTokens ?? 0;
  usage.costMicros += entry.costMicros ?? 0;
  usage.calls += 1;
}
