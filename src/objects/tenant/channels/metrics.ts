import { sql } from "drizzle-orm";
import * as schema from "../../../db/tenant-schema";
import type { TenantDb } from "../types";
import type { DoCallCount, RunOutcome } from "../../../schema/contracts";

type Labels = Record<string, string>;

/** Counter families exposed by GET /v1/metrics (HELP text, metric type). */
export const METRIC_FAMILIES: Record<string, { help: string; type: "counter" | "gauge" }> = {
  vigil_runs_total: { help: "Runs that reached a terminal status, by outcome.", type: "counter" },
  vigil_wakes_total: { help: "Wakes processed, by reason.", type: "counter" },
  vigil_tool_calls_total: { help: "Tool calls planned by runs.", type: "counter" },
  vigil_tokens_total: { help: "Model tokens used by runs, by direction.", type: "counter" },
  vigil_decisions: { help: "Decisions (approvals, questions) currently recorded, by status.", type: "gauge" },
  vigil_cost_micro_usd_total: { help: "Provider cost of runs in micro-USD.", type: "counter" },
  vigil_decisions_requested_total: { help: "Decisions opened, by type (derived from the decision records).", type: "counter" },
  vigil_decisions_resolved_total: { help: "Decisions resolved, by type (derived from the decision records).", type: "counter" },
  vigil_spawns_total: { help: "spawn_agent admission decisions, by outcome.", type: "counter" },
  vigil_do_calls_total: { help: "Durable Object RPC calls made for this tenant, counted at the stub boundary, by called object and method.", type: "counter" },
};

/** Prometheus label value escaping: backslash, double quote and newline. */
export function escapeLabelValue(value: string): string {
  // Every run report formats its counters' labels (outcomes, reasons, method names): most need no escape at all.
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function formatLabels(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}="${escapeLabelValue(labels[key]!)}"`)
    .join(",");
}

/** Renders samples in the Prometheus text exposition format 0.0.4 (every family gets HELP/TYPE). */
export function renderPrometheus(samples: Array<{ name: string; labels: string; value: number }>): string {
  const lines: string[] = [];
  for (const [name, family] of Object.entries(METRIC_FAMILIES)) {
    lines.push(`# HELP ${name} ${family.help}`, `# TYPE ${name} ${family.type}`);
    for (const sample of samples.filter((s) => s.name === name).sort((a, b) => a.labels.localeCompare(b.labels))) {
      lines.push(`${name}${sample.labels ? `{${sample.labels}}` : ""} ${sample.value}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** One counter increment: a name, its formatted label set and a positive whole amount. */
export interface MetricIncrement {
  name: string;
  labels: string;
  value: number;
}

/** Per-tenant counters kept in the tenant's SQLite (one row per name × label set). */
export class TenantMetrics {
  /**
   * Every run report adds its counters: one fixed statement run on the object's SQLite,
   * where `db.run(sql…)` had drizzle render it on every call. (Not `rawStatement` of ../../shared/statements/lean-query: this
   * file is also compiled for Node, by the unit test of the text format, which has no Workers types.)
   */
  private readonly storage: { sql: { exec(query: string, ...params: unknown[]): { toArray(): unknown[] } } };

  constructor(private readonly db: TenantDb) {
    this.storage = (db as unknown as { $client: TenantMetrics["storage"] }).$client;
  }

  /** The increments one run outcome adds (runs, wakes, tool calls, tokens, cost); zero amounts are left out. */
  static outcomeIncrements(outcome: RunOutcome): MetricIncrement[] {
    return [
      increment("vigil_runs_total", { outcome: outcome.status }),
      increment("vigil_wakes_total", { reason: outcome.reason }),
      increment("vigil_tool_calls_total", {}, outcome.toolCalls),
      increment("vigil_tokens_total", { direction: "input" }, outcome.inputTokens),
      increment("vigil_tokens_total", { direction: "output" }, outcome.outputTokens),
      increment("vigil_cost_micro_usd_total", {}, outcome.costMicros ?? 0),
    ].filter((row): row is MetricIncrement => row !== undefined);
  }

  /** Calls counted at the stub boundary (src/objects/shared/call-meter.ts), delivered in batches by whoever carried them. */
  static callIncrements(calls: readonly DoCallCount[]): MetricIncrement[] {
    return calls
      .map((call) => increment("vigil_do_calls_total", { object: call.object, method: call.method }, call.count))
      .filter((row): row is MetricIncrement => row !== undefined);
  }

  /**
   * Adds every increment in ONE statement (a run report used to run one upsert per counter).
   * The rows travel as one JSON parameter, so the statement stays within the bound-parameter limit whatever
   * their number; SQLite applies the upsert row by row, so two rows for one counter both add.
   */
  add(rows: readonly MetricIncrement[]): void {
    if (rows.length === 0) return;
    this.storage.sql.exec(ADD_ROWS, JSON.stringify(rows)).toArray();
  }

  increment(name: string, labels: Labels, by = 1): void {
    const row = increment(name, labels, by);
    if (row) this.add([row]);
  }

  recordDoCalls(calls: readonly DoCallCount[]): void {
    this.add(TenantMetrics.callIncrements(calls));
  }

  render(): string {
    const counters = this.db.select().from(schema.metrics).all();
    const decisions = this.db
      .select({ status: schema.decisions.status, n: sql<number>`count(*)` })
      .from(schema.decisions)
      .groupBy(schema.decisions.status)
      .all()
      .map((row) => ({ name: "vigil_decisions", labels: formatLabels({ status: row.status }), value: Number(row.n) }));
    // Requested/resolved are read from the decision rows themselves, so every writer of decisions is counted alike.
    const byType = this.db
      .select({ type: schema.decisions.type, requested: sql<number>`count(*)`, resolved: sql<number>`count(${schema.decisions.resolvedAt})` })
      .from(schema.decisions)
      .groupBy(schema.decisions.type)
      .all();
    const lifecycle = byType.flatMap((row) => [
      { name: "vigil_decisions_requested_total", labels: formatLabels({ type: row.type }), value: Number(row.requested) },
      { name: "vigil_decisions_resolved_total", labels: formatLabels({ type: row.type }), value: Number(row.resolved) },
    ]);
    return renderPrometheus([...counters, ...decisions, ...lifecycle]);
  }
}

const ADD_ROWS = `INSERT INTO metrics (name, labels, value)
  SELECT json_extract(value, '$.name'), json_extract(value, '$.labels'), json_extract(value, '$.value') FROM json_each(?) WHERE true
  ON CONFLICT (name, labels) DO UPDATE SET value = metrics.value + excluded.value`;

function increment(name: string, labels: Labels, by = 1): MetricIncrement | undefined {
  if (!Number.isFinite(by) || by <= 0) return undefined;
  return { name, labels: formatLabels(labels), value: Math.round(by) };
}
