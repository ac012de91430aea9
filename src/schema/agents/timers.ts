import { z } from "@hono/zod-openapi";
import { CATCHUP_POLICIES, TimerCatchup, TimerSpec } from "../../core/wakes/timer-schedule";
import { IsoTimestamp, PaginationQuery, ResourceId } from "../common";
import { RUN_STATUSES } from "./runs";

export const TIMER_STATUSES = ["active", "completed", "deleted"] as const;
export type TimerStatus = (typeof TIMER_STATUSES)[number];

/** Scheduler decisions as recorded: the core's actions plus the manual trigger. */
export const TIMER_DECISION_ACTIONS = ["fire", "catchup", "skip", "reschedule", "wait", "manual_trigger"] as const;
export type TimerDecisionAction = (typeof TIMER_DECISION_ACTIONS)[number];

const INSTANT_FIELDS = ["at", "anchorAt"] as const;

/** Instants may be sent as ISO-8601 strings (the API's convention) or epoch milliseconds. */
function instantsToEpochMs(input: unknown): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const spec: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const field of INSTANT_FIELDS) {
    const value = spec[field];
    if (typeof value === "string" && IsoTimestamp.safeParse(value).success) spec[field] = Date.parse(value);
  }
  return spec;
}

/** `cron` (5 fields + IANA zone), `interval` (everySeconds, optional anchorAt) or `once` (at); validated by the core. */
export const TimerSpecInput = z.preprocess(instantsToEpochMs, TimerSpec).openapi({
  description: "{kind:'cron', expr, timeZone} | {kind:'interval', everySeconds, anchorAt?} | {kind:'once', at}; instants as ISO-8601 or epoch ms",
  example: { kind: "cron", expr: "0 7 * * 1-5", timeZone: "Europe/Berlin" },
});

export const CreateTimerBody = TimerCatchup.extend({
  name: z.string().trim().min(1).max(120).optional(),
  spec: TimerSpecInput,
}).openapi("CreateTimer");
export type CreateTimerBody = z.infer<typeof CreateTimerBody>;

/** A spec as returned: instants as ISO-8601 strings. */
export const TimerSpecView = z
  .union([
    z.object({ kind: z.literal("cron"), expr: z.string(), timeZone: z.string() }),
    z.object({ kind: z.literal("interval"), everySeconds: z.number().int(), anchorAt: IsoTimestamp.optional() }),
    z.object({ kind: z.literal("once"), at: IsoTimestamp }),
  ])
  .openapi("TimerSpec");
export type TimerSpecView = z.infer<typeof TimerSpecView>;

export const TimerDecisionRecord = z
  .object({
    seq: z.number().int(),
    action: z.enum(TIMER_DECISION_ACTIONS),
    runKey: z.string().nullable(),
    /** Status of the run the decision enqueued (null when it enqueued none). */
    runStatus: z.enum(RUN_STATUSES).nullable(),
    createdAt: IsoTimestamp,
    decision: z.record(z.string(), z.unknown()),
  })
  .openapi("TimerDecision");
export type TimerDecisionRecord = z.infer<typeof TimerDecisionRecord>;

export const Timer = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    spec: TimerSpecView,
    catchupPolicy: z.enum(CATCHUP_POLICIES),
    catchupWindowSeconds: z.number().int(),
    status: z.enum(TIMER_STATUSES),
    nextRunAt: IsoTimestamp.nullable(),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    /** The newest scheduler decisions for this timer (at most 10), newest first. */
    recentDecisions: z.array(TimerDecisionRecord),
  })
  .openapi("Timer");
export type Timer = z.infer<typeof Timer>;

export const TimerParams = z.object({
  id: ResourceId.openapi({ param: { name: "id", in: "path" } }),
  tid: ResourceId.openapi({ param: { name: "tid", in: "path" } }),
});

export const ListTimersQuery = PaginationQuery.extend({
  include: z.enum(["deleted"]).optional().openapi({ description: "`deleted` also lists tombstoned timers" }),
});
export type ListTimersQuery = z.infer<typeof ListTimersQuery>;
