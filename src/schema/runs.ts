import { z } from "@hono/zod-openapi";
import { WAKE_REASONS } from "../core/run-keys";
import { IsoTimestamp } from "./common";

/** `waiting`: parked until a tool saga reports back; `ready`: reported, about to resume. */
export const RUN_STATUSES = ["queued", "running", "waiting", "ready", "completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: ReadonlyArray<RunStatus> = ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal"];

export const Run = z
  .object({
    runKey: z.string(),
    reason: z.enum(WAKE_REASONS),
    threadId: z.string(),
    status: z.enum(RUN_STATUSES),
    attempt: z.number().int(),
    enqueuedAt: IsoTimestamp,
    startedAt: IsoTimestamp.nullable(),
    endedAt: IsoTimestamp.nullable(),
    errorCode: z.string().nullable(),
    trace: z.record(z.string(), z.unknown()),
  })
  .openapi("Run");
export type Run = z.infer<typeof Run>;

export const AgentEvent = z
  .object({ seq: z.number().int(), type: z.string(), runKey: z.string().nullable(), data: z.record(z.string(), z.unknown()), createdAt: IsoTimestamp })
  .openapi("AgentEvent");
export type AgentEvent = z.infer<typeof AgentEvent>;
