import { asc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { nowIso } from "../../shared/sqlite";
import type { AgentDb } from "../types";

import type { AttemptEntry, PolicyEntry, RunTraceKind, SagaEntry, UsageEntry } from "../../../core/runtime/run-trace-entries";

export type { AttemptEntry, PolicyEntry, RunTraceKind, SagaEntry, UsageEntry };

/**
 * Append-only trace rows of a run, written as things happen (a run parked on a saga or cut short by
 * a crash keeps them). The run record shows them grouped: `attempts`, `policy`, `usage` totals.
 */
export class RunTrace {
  constructor(private readonly db: AgentDb) {}

  attempt(runKey: string, entry: AttemptEntry): void {
    this.add(runKey, "attempt", { ...entry });
  }

  policy(runKey: string, entry: PolicyEntry): void {
    this.add(runKey, "policy", { ...entry });
  }

  usage(runKey: string, entry: UsageEntry): void {
    this.add(runKey, "usage", { ...entry });
  }

  saga(runKey: string, entry: SagaEntry): void {
    this.add(runKey, "saga", { ...entry });
  }

  /** Every row of a run in order, as stored (the trace export reads them). */
  rows(runKey: string): Array<{ kind: string; data: Record<string, unknown>; createdAt: string }> {
    return this.db.select({ kind: schema.runTrace.kind, data: schema.runTrace.data, createdAt: schema.runTrace.createdAt }).from(schema.runTrace).where(eq(schema.runTrace.runKey, runKey)).orderBy(asc(schema.runTrace.seq)).all();
  }

  /** The grouped view merged into `Run.trace`. */
  view(runKey: string): { attempts: Record<string, unknown>[]; policy: Record<string, unknown>[]; usage: { inputTokens: number; outputTokens: number; costMicros: number; calls: number } } {
    const rows = this.db.select().from(schema.runTrace).where(eq(schema.runTrace.runKey, runKey)).orderBy(asc(schema.runTrace.seq)).all();
    const attempts: Record<string, unknown>[] = [];
    const policy: Record<string, unknown>[] = [];
    const usage = { inputTokens: 0, outputTokens: 0, costMicros: 0, calls: 0 };
    for (const row of rows) {
      const entry = { ...row.data, at: row.createdAt };
      if (row.kind === "attempt") attempts.push(entry);
      else if (row.kind === "policy") policy.push(entry);
      else if (row.kind === "usage") {
        const data = row.data as Partial<UsageEntry>;
        usage.inputTokens += data.inputTokens ?? 0;
        usage.outputTokens += data.outputTokens ?? 0;
        usage.costMicros += data.costMicros ?? 0;
        usage.calls += 1;
      }
    }
    return { attempts, policy, usage };
  }

  private add(runKey: string, kind: RunTraceKind, data: Record<string, unknown>): void {
    // seq numbers the run's rows (the key is (run_key, seq), so the run key is stored once per row).
    const seq = sql<number>`(SELECT coalesce(max(${schema.runTrace.seq}), 0) + 1 FROM ${schema.runTrace} WHERE ${schema.runTrace.runKey} = ${runKey})`;
    this.db.insert(schema.runTrace).values({ runKey, seq, kind, data, createdAt: nowIso() }).run();
  }
}
