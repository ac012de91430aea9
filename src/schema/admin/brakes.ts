import { z } from "@hono/zod-openapi";
import { BUDGET_DIMENSIONS } from "../../core/governance/budget";
import { IsoTimestamp, ResourceId } from "../common";

export const BRAKE_SCOPES = ["all", "agent", "kind", "tool"] as const;

/** `POST /v1/brakes`: `target` names the agent id, agent kind or tool (as `GET /v1/tools` lists it); absent for `all`. */
export const EngageBrakeBody = z
  .object({
    scope: z.enum(BRAKE_SCOPES),
    target: z.string().trim().min(1).max(200).optional(),
    behaviour: z.enum(["pause", "kill"]).openapi({ description: "pause: read tools still run, in-flight runs stop at the next step; kill: every tool stops, runs end failed_terminal" }),
    release: z.enum(["manual", "timer", "decision"]).default("manual"),
    releaseAt: IsoTimestamp.optional().openapi({ description: "Required with release=timer: when the brake lets go by itself" }),
    reason: z.string().trim().min(1).max(2_000),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.scope === "all" && body.target !== undefined) ctx.addIssue({ code: "custom", path: ["target"], message: "scope all takes no target" });
    if (body.scope !== "all" && body.target === undefined) ctx.addIssue({ code: "custom", path: ["target"], message: `scope ${body.scope} needs a target` });
    if (body.release === "timer" && body.releaseAt === undefined) ctx.addIssue({ code: "custom", path: ["releaseAt"], message: "release timer needs releaseAt" });
    if (body.release !== "timer" && body.releaseAt !== undefined) ctx.addIssue({ code: "custom", path: ["releaseAt"], message: "releaseAt is only for release timer" });
  })
  .openapi("EngageBrake");
export type EngageBrakeBody = z.infer<typeof EngageBrakeBody>;

export const BrakeView = z
  .object({
    id: z.string(),
    scope: z.enum(BRAKE_SCOPES),
    target: z.string().nullable(),
    behaviour: z.enum(["pause", "kill"]),
    release: z.enum(["manual", "timer", "decision"]),
    releaseAt: IsoTimestamp.nullable(),
    /** With release=decision: the `decision/option` (keep | release) that lets it go. */
    decisionId: z.string().nullable(),
    reason: z.string(),
    initiatedBy: z.string(),
    active: z.boolean(),
    createdAt: IsoTimestamp,
    releasedAt: IsoTimestamp.nullable(),
    releasedBy: z.string().nullable(),
  })
  .openapi("Brake");
export type BrakeView = z.infer<typeof BrakeView>;

export const ListBrakesQuery = z.object({ status: z.enum(["active", "released"]).optional() });

export const BrakeIdParam = z.object({ id: ResourceId.openapi({ param: { name: "id", in: "path" } }) });

const DimensionRecord = z.object(Object.fromEntries(BUDGET_DIMENSIONS.map((d) => [d, z.number().int()])) as Record<(typeof BUDGET_DIMENSIONS)[number], z.ZodNumber>);
const LimitRecord = z.object(Object.fromEntries(BUDGET_DIMENSIONS.map((d) => [d, z.number().int().nullable()])) as Record<(typeof BUDGET_DIMENSIONS)[number], z.ZodNullable<z.ZodNumber>>);

/** `GET /v1/agents/:id/usage`: one tenant-local day of usage against the limits in force. */
export const AgentUsage = z
  .object({
    agentId: z.string(),
    day: z.string().openapi({ example: "2026-11-25" }),
    timeZone: z.string(),
    usage: DimensionRecord,
    /** null = unlimited. */
    limits: LimitRecord,
    tools: z.array(z.object({ toolName: z.string(), calls: z.number().int(), quotaPerDay: z.number().int().nullable() })),
    resetsAt: IsoTimestamp.nullable().openapi({ description: "When today's counters reset (the tenant's next local midnight); null for another day" }),
  })
  .openapi("AgentUsage");
export type AgentUsage = z.infer<typeof AgentUsage>;

export const UsageQuery = z.object({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "YYYY-MM-DD").optional() });
