import { and, asc, eq, sql } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import { inList } from "../../shared/statements/sql-in";
import type { Run } from "../../../schema/agents/runs";
import type { ChildrenStore } from "../delegation";
import type { RunTrace } from "./run-trace";
import type { AgentDb } from "../types";

/** One tool call of a run as the run view shows it (from the actions table: the plan and its result). */
export interface ToolCallView {
  operationId: string;
  name: string;
  step: number;
  callIndex: number;
  status: string;
  ok: boolean | null;
  code: string | null;
  riskLevel: string;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

type Usage = { inputTokens: number; outputTokens: number; costMicros: number; calls: number };

const TERMINAL_ACTIONS = ["completed", "failed"];

/**
 * Token and cost totals, one rule for both views: the provider's own usage rows (RunTrace, written
 * per model call by the gateway) when there are any, else what the run loop counted itself.
 */
export function mergedUsage(stored: Record<string, unknown>, recorded: Usage): Usage {
  if (recorded.calls > 0) return recorded;
  const loop = (stored.usage ?? {}) as Partial<Usage>;
  return { inputTokens: loop.inputTokens ?? 0, outputTokens: loop.outputTokens ?? 0, costMicros: 0, calls: 0 };
}

/** Wall clock from the run's first start to its terminal status (a run parked on a saga included). */
function latencyOf(run: Run): number | null {
  if (!run.startedAt || !run.endedAt) return typeof run.trace.latencyMs === "number" ? run.trace.latencyMs : null;
  return Math.max(0, Date.parse(run.endedAt) - Date.parse(run.startedAt));
}

/**
 * `GET /v1/agents/:id/runs/:runKey`: the stored run record, completed from the actions table (tool
 * calls), the RunTrace rows (provider attempts, policy decisions, usage) and the lineage tables.
 */
export class RunView {
  constructor(
    private readonly db: AgentDb,
    private readonly trace: RunTrace,
    private readonly children: ChildrenStore,
  ) {}

  detail(run: Run): Run {
    const recorded = this.trace.view(run.runKey);
    const usage = mergedUsage(run.trace, recorded.usage);
    const toolCalls = this.toolCalls(run.runKey);
    const spawned = this.children.ofRun(run.runKey).map((child) => ({ childId: child.childId, operationId: child.operationId, childRunKey: child.childRunKey, status: child.status, onComplete: child.onComplete }));
    return {
      ...run,
      trace: {
        ...run.trace,
        reason: run.reason,
        steps: typeof run.trace.steps === "number" ? run.trace.steps : new Set(toolCalls.map((call) => call.step)).size,
        toolCalls,
        policy: recorded.policy,
        attempts: recorded.attempts,
        usage,
        tokens: { input: usage.inputTokens, output: usage.outputTokens, total: usage.inputTokens + usage.outputTokens },
        costMicros: usage.costMicros,
        latencyMs: latencyOf(run),
        children: spawned,
      },
    };
  }

  /** The list view: the stored record plus cheap totals (two grouped queries per page, no per-run detail). */
  summaries(runs: Run[]): Run[] {
    if (runs.length === 0) return runs;
    const keys = runs.map((run) => run.runKey);
    const calls = new Map(
      this.db
        .select({ runKey: schema.actions.runKey, n: sql<number>`count(*)` })
        .from(schema.actions)
        .where(inList(schema.actions.runKey, keys))
        .groupBy(schema.actions.runKey)
        .all()
        .map((row) => [row.runKey, Number(row.n)]),
    );
    const usageRows = this.trace.usageTotals(keys);
    return runs.map((run) => {
      const usage = mergedUsage(run.trace, usageRows.get(run.runKey) ?? { inputTokens: 0, outputTokens: 0, costMicros: 0, calls: 0 });
      return {
        ...run,
        trace: {
          ...run.trace,
          reason: run.reason,
          toolCallCount: calls.get(run.runKey) ?? 0,
          usage,
          tokens: { input: usage.inputTokens, output: usage.outputTokens, total: usage.inputTokens + usage.outputTokens },
          costMicros: usage.costMicros,
          latencyMs: latencyOf(run),
        },
      };
    });
  }

  private toolCalls(runKey: string): ToolCallView[] {
    return this.db
      .select()
      .from(schema.actions)
      .where(eq(schema.actions.runKey, runKey))
      .orderBy(asc(schema.actions.step), asc(schema.actions.callIndex))
      .all()
      .map((row) => {
        const result = row.result as { ok?: boolean; code?: string } | null;
        const ended = TERMINAL_ACTIONS.includes(row.status);
        return {
          operationId: row.operationId,
          name: row.toolName,
          step: row.step,
          callIndex: row.callIndex,
          status: row.status,
          ok: result && typeof result.ok === "boolean" ? result.ok : null,
          code: result && result.ok === false && typeof result.code === "string" ? result.code : null,
          riskLevel: row.riskLevel,
          startedAt: row.createdAt,
          endedAt: ended ? row.updatedAt : null,
          durationMs: ended ? Math.max(0, Date.parse(row.updatedAt) - Date.parse(row.createdAt)) : null,
        };
      });
  }
}
