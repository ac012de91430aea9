import { z } from "@hono/zod-openapi";
import { WAKE_REASONS } from "../../core/ids/run-keys";
import { IsoTimestamp } from "../common";

/**
 * `waiting`: parked until a tool saga reports back; `ready`: reported, about to resume. `interrupted`: a newer
 * message of its session (double texting `interrupt`) stopped it at a step boundary.
 */
export const RUN_STATUSES = ["queued", "running", "waiting", "ready", "completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal", "interrupted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: ReadonlyArray<RunStatus> = ["completed", "skipped_sleeping", "skipped_destroyed", "failed_terminal", "interrupted"];

/** The `trace` record of a run, field by field (kept a record: gates and providers add entries over time). */
const RUN_TRACE_DESCRIPTION = [
  "What the run did. Both views: `reason` (wake reason), `steps` (model steps taken), `model`, `attempt`, `resumed`, `coalescedRunKeys`,",
  "`replyMessageId` (final reply) or `stopReason` (`max_steps`), `error` (failed runs), `usage` {inputTokens, outputTokens, costMicros, calls}",
  "(the provider's usage rows when any, else the run loop's own count), `tokens` {input, output, total}, `costMicros` (micro-USD),",
  "`latencyMs` (first start → terminal, wall clock). List view only: `toolCallCount`. Single-run view only: `toolCalls[]`",
  "{operationId, name, step, callIndex, status, ok, code, riskLevel, startedAt, endedAt, durationMs} from the persisted plans;",
  "`policy[]` gate decisions {gate, outcome, code?, subject?, detail?, at} (inference gate, brakes, budgets, approvals, `spawn_admission`, `need_to_know`);",
  "`attempts[]` provider attempt timeline {provider, model, attempt, outcome, status?, errorCode?, backoffMs?, durationMs, at};",
  "`children[]` agents spawned by this run {childId, operationId, childRunKey, status, onComplete}.",
].join(" ");

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
    trace: z.record(z.string(), z.unknown()).openapi({
      description: RUN_TRACE_DESCRIPTION,
      example: {
        reason: "userInitiated",
        steps: 2,
        model: "builtin:playbook",
        latencyMs: 41,
        attempt: 1,
        resumed: false,
        coalescedRunKeys: [],
        replyMessageId: "5f0c…",
        toolCalls: [{ operationId: "9a1e…", name: "spawn_agent", step: 0, callIndex: 0, status: "completed", ok: true, code: null, riskLevel: "low", startedAt: "2026-01-01T00:00:00.000Z", endedAt: "2026-01-01T00:00:00.012Z", durationMs: 12 }],
        policy: [{ gate: "spawn_admission", outcome: "allowed", subject: "spawn_agent", detail: { childId: "ag_…", depth: 1 }, at: "2026-01-01T00:00:00.005Z" }],
        attempts: [],
        usage: { inputTokens: 120, outputTokens: 18, costMicros: 0, calls: 0 },
        tokens: { input: 120, output: 18, total: 138 },
        costMicros: 0,
        children: [{ childId: "ag_…", operationId: "9a1e…", childRunKey: "3b7d…", status: "completed", onComplete: "report_result_to_parent" }],
      },
    }),
  })
  .openapi("Run");
export type Run = z.infer<typeof Run>;

export const AgentEvent = z
  .object({ seq: z.number().int(), type: z.string(), runKey: z.string().nullable(), data: z.record(z.string(), z.unknown()), createdAt: IsoTimestamp })
  .openapi("AgentEvent");
export type AgentEvent = z.infer<typeof AgentEvent>;
