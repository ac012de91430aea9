/** Rating and productivity-signal tools (seed 000 §4.2). */
import { z } from "zod";
import { defineFamily, READ_ONLY } from "./types";
import { calendarDate, entityId, ratingOut, ratingTargetType } from "./shared";

const target = { targetType: ratingTargetType, targetId: entityId("targetId") };

/** The metadata this file's tools share; each tool states only what differs. */
const ratingTool = defineFamily({ capabilitiesRequired: ["ratingRead"], idempotencyStrategy: "read_only", scopeRules: ["target_category"], sideEffects: READ_ONLY, dataMinimizationPolicyRef: "dm.journal.ratings.v1" });

export const getRatingsSummary = ratingTool({
  name: "get_ratings_summary",
  description: "Summarise ratings in a date range (count, average, distribution), over the agent's categories only.",
  inputSchema: z
    .strictObject({
      from: calendarDate("first day, YYYY-MM-DD"),
      to: calendarDate("last day (inclusive), YYYY-MM-DD"),
      targetTypes: z.array(ratingTargetType).max(4).optional().describe("default: every target type"),
      categoryIds: z.array(entityId("categoryIds[]")).max(100).optional().describe("narrow to these categories"),
    })
    .refine((args) => args.from <= args.to, { message: "to must not be before from", path: ["to"] }),
  outputSchema: z.object({
    count: z.int().min(0),
    average: z.number().nullable(),
    byScore: z.object({ 1: z.int(), 2: z.int(), 3: z.int(), 4: z.int(), 5: z.int() }),
    byTargetType: z.record(z.string(), z.object({ count: z.int().min(0), average: z.number().nullable() })),
  }),
  scopeRules: ["read_filtered"],
});

export const getRatingForTarget = ratingTool({
  name: "get_rating_for_target",
  description: "Read the rating of one task, time entry, day plan or entry (null when unrated).",
  inputSchema: z.strictObject(target),
  outputSchema: z.object({ rating: ratingOut.nullable() }),
});

export const createOrUpdateRating = ratingTool({
  name: "create_or_update_rating",
  description: "Set the 1-5 rating of a target (one rating per target: an existing one is updated).",
  inputSchema: z.strictObject({
    ...target,
    score: z.int().min(1).max(5),
    note: z.string().max(2_000).optional(),
  }),
  outputSchema: z.object({ rating: ratingOut, created: z.boolean() }),
  capabilitiesRequired: ["ratingWrite"],
  idempotencyStrategy: "natural_key",
  sideEffects: { kind: "journal_write", entityTypes: ["rating"], semanticKeys: ["RATING"] },
  riskLevel: "medium",
});

export const ratingTools = [getRatingsSummary, getRatingForTarget, createOrUpdateRating] as const;
