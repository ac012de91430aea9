import type { InferSelectModel } from "drizzle-orm";
import type { TimerDecision, TimerSpec } from "../../../core/wakes/timer-schedule";
import type { schedulerDecisions, timers } from "../../../db/agent-schema";
import type { RunStatus } from "../../../schema/agents/runs";
import type { Timer, TimerDecisionAction, TimerDecisionRecord, TimerSpecView, TimerStatus } from "../../../schema/agents/timers";

export type TimerRow = InferSelectModel<typeof timers>;
export type DecisionRow = InferSelectModel<typeof schedulerDecisions>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Row → public timer; the spec's epoch-ms instants become ISO-8601 strings. */
export function toTimer(row: TimerRow, recentDecisions: TimerDecisionRecord[]): Timer {
  return {
    id: row.id,
    name: row.name,
    spec: specView(row.spec as TimerSpec),
    catchupPolicy: row.catchupPolicy as Timer["catchupPolicy"],
    catchupWindowSeconds: row.catchupWindowSeconds,
    status: row.status as TimerStatus,
    nextRunAt: row.nextRunAt === null ? null : iso(row.nextRunAt),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    recentDecisions,
  };
}

function specView(spec: TimerSpec): TimerSpecView {
  switch (spec.kind) {
    case "cron":
      return spec;
    case "interval":
      return { kind: "interval", everySeconds: spec.everySeconds, ...(spec.anchorAt === undefined ? {} : { anchorAt: iso(spec.anchorAt) }) };
    case "once":
      return { kind: "once", at: iso(spec.at) };
  }
}

export function toDecisionRecord(row: DecisionRow, runStatus: RunStatus | null): TimerDecisionRecord {
  return {
    seq: row.seq,
    action: row.action as TimerDecisionAction,
    runKey: row.runKey,
    runStatus,
    createdAt: row.createdAt,
    decision: row.decision,
  };
}

const INSTANT_KEYS = ["evaluatedAt", "previousNextRunAt", "advancedNextRunAt", "scheduledAt", "firstMissedAt", "lastMissedAt"] as const;

/** A core decision as stored: plain JSON with its instants as ISO-8601 strings, plus what happened to its wake. */
export function decisionJson(decision: TimerDecision, enqueue: "accepted" | "duplicate" | null): Record<string, unknown> {
  const out: Record<string, unknown> = { ...decision };
  for (const key of INSTANT_KEYS) {
    const value = out[key];
    if (typeof value === "number") out[key] = iso(value);
  }
  if (enqueue) out.enqueue = enqueue;
  return out;
}
