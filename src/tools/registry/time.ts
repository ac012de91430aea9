/** Time capture tools (seed 000 §4.2, §4.3 `create_retrospective_time_entry`). */
import { z } from "zod";
import { defineFamily } from "./types";
import { dateTime, endsAfterStart, entityId, timeEntryOut, text } from "./shared";

const TIME_EFFECTS = { kind: "journal_write", entityTypes: ["time_entry"], semanticKeys: ["TIME_ENTRY"] } as const;
const note = z.string().max(2_000);

/** The metadata this file's tools share; each tool states only what differs. */
const timeTool = defineFamily({ capabilitiesRequired: ["timeWrite"], idempotencyStrategy: "operation_id", scopeRules: ["target_category"], sideEffects: TIME_EFFECTS, dataMinimizationPolicyRef: "dm.journal.time.v1" });

export const createRetrospectiveTimeEntry = timeTool({
  name: "create_retrospective_time_entry",
  description: "Log a finished work session on a task from a dictated or remembered time range.",
  inputSchema: z
    .strictObject({
      taskId: entityId("taskId"),
      startedAt: dateTime("start, ISO-8601 with offset"),
      endedAt: dateTime("end, ISO-8601 with offset; after startedAt"),
      description: text("description", 2_000).optional(),
      sourceEntryId: entityId("sourceEntryId", "the journal entry (e.g. a voice note) this was taken from").optional(),
    })
    .refine(endsAfterStart, { message: "endedAt must be after startedAt", path: ["endedAt"] }),
  outputSchema: z.object({ timeEntry: timeEntryOut }),
});

export const startTaskTimer = timeTool({
  name: "start_task_timer",
  description: "Start a running time entry on a task (at startedAt, default now). Fails if one is already running for the task.",
  inputSchema: z.strictObject({
    taskId: entityId("taskId"),
    startedAt: dateTime("default: when the action executes").optional(),
    note: note.optional(),
  }),
  outputSchema: z.object({ timeEntry: timeEntryOut }),
});

export const stopTaskTimer = timeTool({
  name: "stop_task_timer",
  description: "Stop a running time entry, named by timeEntryId or by the task it runs on (at endedAt, default now).",
  inputSchema: z
    .strictObject({
      timeEntryId: entityId("timeEntryId").optional(),
      taskId: entityId("taskId").optional(),
      endedAt: dateTime("default: when the action executes").optional(),
    })
    .refine((args) => (args.timeEntryId === undefined) !== (args.taskId === undefined), "give exactly one of timeEntryId and taskId"),
  outputSchema: z.object({ timeEntry: timeEntryOut }),
});

export const annotateTimeEntry = timeTool({
  name: "annotate_time_entry",
  description: "Add to (or replace) the note of a time entry.",
  inputSchema: z.strictObject({
    timeEntryId: entityId("timeEntryId"),
    note: text("note", 2_000),
    mode: z.enum(["append", "replace"]).default("append"),
  }),
  outputSchema: z.object({ timeEntry: timeEntryOut }),
});

export const timeTools = [createRetrospectiveTimeEntry, startTaskTimer, stopTaskTimer, annotateTimeEntry] as const;
