import { asc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";
import { type FoldContext, type TraceEntry, unfoldEntries } from "./folded-trace";

/** A run's rows still in `run_trace`, in order: read by the run's end (to fold them) and by the trace export. */
export function runTraceRows(db: AgentDb) {
  const t = schema.runTrace;
  return db.select({ kind: t.kind, data: t.data, createdAt: t.createdAt }).from(t).where(eq(t.runKey, sql.placeholder("runKey"))).orderBy(asc(t.seq)).prepare();
}

/** Every trace entry of a run in order: those folded into its row when it ended (none without a row), then `tableRows`. */
export function traceEntriesOf(run: (FoldContext & { trace: Record<string, unknown> }) | undefined, tableRows: TraceEntry[]): TraceEntry[] {
  const folded = run ? unfoldEntries(run.trace, run) : [];
  return folded.length === 0 ? tableRows : [...folded, ...tableRows];
}
