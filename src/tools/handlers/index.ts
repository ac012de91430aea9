/**
 * The TenantDO-side handler of every journal tool in the registry (seed 000 §4.2). The
 * agent-side tools (memory, reports, questions, sleep) run in the AgentDO and have no entry here.
 */
import type { ToolRegistry } from "../registry";
import { addMultipleChecklistItems, createChecklist, moveChecklistItems, moveChecklistItemsToNewTask, updateChecklistItems } from "./checklists";
import type { Args, HandlerContext, HandlerOutcome } from "./context";
import { getOrCreateDayPlan, pinDayPlanTasks, replanDayBlocks, upsertDayPlanBlocks } from "./day-plans";
import { createOrUpdateRating, getRatingForTarget, getRatingsSummary } from "./ratings";
import { listAllowedCategories, listTasksInScope, resolveTaskReference } from "./reads";
import { concludeTaskWithRollover, createFollowUpTask, createTask, updateTaskFields } from "./tasks";
import { annotateTimeEntry, createRetrospectiveTimeEntry, startTaskTimer, stopTaskTimer } from "./time";

export const AGENT_SIDE_TOOL_NAMES = ["memory_search", "memory_update_slot", "publish_report", "ask_user", "sleep", "spawn_agent"] as const;
export type JournalToolName = Exclude<keyof ToolRegistry, (typeof AGENT_SIDE_TOOL_NAMES)[number]>;

export const journalHandlers: { readonly [N in JournalToolName]: (args: Args<N>, ctx: HandlerContext) => HandlerOutcome } = {
  list_allowed_categories: listAllowedCategories,
  list_tasks_in_scope: listTasksInScope,
  resolve_task_reference: resolveTaskReference,
  create_task: createTask,
  update_task_fields: updateTaskFields,
  create_follow_up_task: createFollowUpTask,
  conclude_task_with_rollover: concludeTaskWithRollover,
  create_checklist: createChecklist,
  add_multiple_checklist_items: addMultipleChecklistItems,
  update_checklist_items: updateChecklistItems,
  move_checklist_items: moveChecklistItems,
  move_checklist_items_to_new_task: moveChecklistItemsToNewTask,
  create_retrospective_time_entry: createRetrospectiveTimeEntry,
  start_task_timer: startTaskTimer,
  stop_task_timer: stopTaskTimer,
  annotate_time_entry: annotateTimeEntry,
  get_or_create_day_plan: getOrCreateDayPlan,
  upsert_day_plan_blocks: upsertDayPlanBlocks,
  pin_day_plan_tasks: pinDayPlanTasks,
  replan_day_blocks: replanDayBlocks,
  get_ratings_summary: getRatingsSummary,
  get_rating_for_target: getRatingForTarget,
  create_or_update_rating: createOrUpdateRating,
};

export function isJournalToolName(name: string): name is JournalToolName {
  return Object.hasOwn(journalHandlers, name);
}

export type { HandlerContext, HandlerOutcome } from "./context";
