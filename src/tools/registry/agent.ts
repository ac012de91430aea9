/** The agent's own outputs and lifecycle: reports, questions to people, sleep. */
import { z } from "zod";
import { REPORT_SCOPES } from "../../core/memory/reports";
import { defineFamily } from "./types";
import { dateTime, text } from "./shared";

/** The metadata this file's tools share; each tool states only what differs. */
const agentTool = defineFamily({ idempotencyStrategy: "operation_id", scopeRules: ["none"] });

export const publishReport = agentTool({
  name: "publish_report",
  description:
    "Publish an immutable report (current, daily, weekly or monthly) and move that scope's head to it. Republishing identical content only re-confirms the head.",
  inputSchema: z.strictObject({
    scope: z.enum(REPORT_SCOPES),
    periodKey: z
      .string()
      .regex(/^(|\d{4}-\d{2}-\d{2}|\d{4}-W\d{2}|\d{4}-\d{2})$/, "periodKey must be YYYY-MM-DD, YYYY-Www or YYYY-MM")
      .default("")
      .describe("the period a daily/weekly/monthly report covers; empty for current"),
    content: z.record(z.string(), z.json()),
    confidence: z.number().min(0).max(1).optional(),
  }),
  outputSchema: z.object({ reportId: z.string(), scope: z.enum(REPORT_SCOPES), created: z.boolean() }),
  capabilitiesRequired: ["reportWrite"],
  idempotencyStrategy: "natural_key",
  sideEffects: { kind: "agent_state", entityTypes: ["report"], semanticKeys: ["agentChangedNotification"] },
  dataMinimizationPolicyRef: "dm.agent.reports.v1",
});

const optionId = z.string().regex(/^[a-z0-9_-]{1,32}$/, "option ids are 1-32 of a-z 0-9 _ -");

export const askUser = agentTool({
  name: "ask_user",
  description:
    "Ask a person a question, optionally with options to choose from. Opens a decision; the answer wakes the agent later (reason toolResult).",
  inputSchema: z
    .strictObject({
      question: text("question", 2_000),
      options: z
        .array(z.strictObject({ id: optionId, label: text("label", 200), description: z.string().max(1_000).optional() }))
        .max(8)
        .default([])
        .refine((options) => new Set(options.map((option) => option.id)).size === options.length, "option ids must be unique"),
      recommendedOptionId: optionId.optional(),
      allowFreeText: z.boolean().default(true),
    })
    .refine((args) => args.recommendedOptionId === undefined || args.options.some((option) => option.id === args.recommendedOptionId), {
      message: "recommendedOptionId must name one of the options",
      path: ["recommendedOptionId"],
    }),
  outputSchema: z.object({
    decisionId: z.string(),
    status: z.enum(["pending", "answered"]),
    chosenOptionId: z.string().nullable(),
    answerText: z.string().nullable(),
  }),
  capabilitiesRequired: ["askUser"],
  sideEffects: { kind: "agent_state", entityTypes: ["decision"], semanticKeys: [] },
  dataMinimizationPolicyRef: "dm.agent.ask_user.v1",
});

export const sleep = agentTool({
  name: "sleep",
  description: "Sleep until a time (or for a duration): autonomous wakes before then are skipped; user messages still arrive.",
  inputSchema: z
    .strictObject({
      until: dateTime("wake no earlier than this instant").optional(),
      durationSeconds: z.int().min(60).max(2_592_000).optional().describe("60 s to 30 days"),
      reason: z.string().max(500).optional(),
    })
    .refine((args) => (args.until === undefined) !== (args.durationSeconds === undefined), "give exactly one of until and durationSeconds"),
  outputSchema: z.object({ sleepUntil: z.string() }),
  capabilitiesRequired: ["sleep"],
  sideEffects: { kind: "agent_state", entityTypes: ["agent_state"], semanticKeys: ["agentStateChangedNotification"] },
  dataMinimizationPolicyRef: "dm.agent.lifecycle.v1",
});

export const agentTools = [publishReport, askUser, sleep] as const;
