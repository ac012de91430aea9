import { z } from "zod";

/**
 * Per-agent daily budgets and per-tool quotas (seed 000 "per-agent/day budget limits (token/cost/runtime/
 * tool-call caps)", windowed by local day, hard limit fail-closed `budget_exceeded`; seed 003 §9.2
 * `ToolQuota` → `tool_quota_exceeded`). The day is the tenant's local day in its IANA time zone.
 */

/** Cost is counted in integer micro-USD so that summed counters stay exact. */
export const BUDGET_DIMENSIONS = ["tokens", "costMicroUsd", "runtimeMs", "toolCalls"] as const;
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];
export type BudgetUsage = Record<BudgetDimension, number>;
/** An absent dimension is unlimited; 0 disables the agent for that dimension. */
export type BudgetLimits = Partial<Record<BudgetDimension, number>>;

const counter = z.number().int().min(0);
export const budgetLimitsSchema = z
  .object({ tokens: counter, costMicroUsd: counter, runtimeMs: counter, toolCalls: counter })
  .partial()
  .strict();

export const toolQuotaSchema = z.object({ maxPerSession: counter, maxPerDay: counter }).partial().strict();
/** Seed 003 `ToolQuota` limits (the counters live in the budget window and the session). */
export type ToolQuota = z.infer<typeof toolQuotaSchema>;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `timeZone` is an IANA zone this runtime knows; validate tenant settings with it. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The tenant-local calendar day containing `nowMs`, as `YYYY-MM-DD`.
 * @throws RangeError for an unknown time zone.
 */
export function dayKey(nowMs: number, timeZone: string): string {
  // A run asks for its day at every gate and usage booking, all within milliseconds (
  // formatToParts was most of the governor's own time). Every zone's UTC offsets and transitions are whole seconds
  // (tzdata stores seconds), so a local midnight falls on a whole UTC second and the day cannot change within one:
  // the key of the last second asked is kept per zone.
  const second = Math.floor(nowMs / 1000);
  const last = lastDayKeys.get(timeZone);
  if (last !== undefined && last.second === second) return last.key;
  const parts = formatterFor(timeZone).formatToParts(new Date(nowMs));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((part) => part.type === type)?.value ?? "";
  const key = `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`;
  lastDayKeys.set(timeZone, { second, key });
  return key;
}

/** Per zone, the day key of the UTC second last asked (`dayKey`); at most one entry per zone in use. */
const lastDayKeys = new Map<string, { second: number; key: string }>();

/**
 * The first instant of the next local day (when the budget resets). Found by bisection on `dayKey`
 * so DST shifts and odd offsets need no offset arithmetic.
 */
export function nextDayStartMs(nowMs: number, timeZone: string): number {
  const today = dayKey(nowMs, timeZone);
  let lo = nowMs;
  // No zone has a day longer than 26 hours (a DST fall-back day is 25).
  let hi = nowMs + 26 * 3_600_000;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (dayKey(mid, timeZone) === today) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** One agent's counters for one local day (seed 000 `windowStartLocalDate`). */
export interface BudgetWindow {
  dayKey: string;
  usage: BudgetUsage;
  toolCallsByTool: Record<string, number>;
}

export function emptyUsage(): BudgetUsage {
  return { tokens: 0, costMicroUsd: 0, runtimeMs: 0, toolCalls: 0 };
}

/** The window for `nowMs`: the stored one if it is still today, else a fresh one (the daily reset). */
export function currentBudgetWindow(stored: BudgetWindow | null | undefined, nowMs: number, timeZone: string): BudgetWindow {
  const today = dayKey(nowMs, timeZone);
  if (stored?.dayKey === today) return stored;
  return { dayKey: today, usage: emptyUsage(), toolCallsByTool: {} };
}

/** Adds consumed resources; a tool call also counts against its own per-tool day counter. */
export function addUsage(window: BudgetWindow, delta: Partial<BudgetUsage>, toolName?: string): BudgetWindow {
  const consumed = toolName === undefined ? delta : { ...delta, toolCalls: Math.max(1, delta.toolCalls ?? 1) };
  const usage = { ...window.usage };
  for (const dimension of BUDGET_DIMENSIONS) usage[dimension] += Math.max(0, consumed[dimension] ?? 0);
  const toolCallsByTool =
    toolName === undefined
      ? window.toolCallsByTool
      : { ...window.toolCallsByTool, [toolName]: (window.toolCallsByTool[toolName] ?? 0) + (consumed.toolCalls ?? 1) };
  return { ...window, usage, toolCallsByTool };
}

export type BudgetCheck =
  | { ok: true; warnings: BudgetDimension[] }
  | { ok: false; code: "budget_exceeded"; dimension: BudgetDimension; used: number; limit: number };

export interface BudgetCheckOptions {
  /** What the next step is expected to consume; without it, a budget that is used up refuses. */
  projected?: Partial<BudgetUsage>;
  /** Seed 000's optional soft limits: reaching one only warns. */
  softLimits?: BudgetLimits;
}

/**
 * Hard limits fail closed (seed 000): refused when the usage has reached the limit, or when the
 * projected consumption would pass it. Dimensions are checked in a fixed order, so the reported
 * dimension is deterministic.
 */
export function checkBudget(usage: BudgetUsage, limits: BudgetLimits, options: BudgetCheckOptions = {}): BudgetCheck {
  const warnings: BudgetDimension[] = [];
  for (const dimension of BUDGET_DIMENSIONS) {
    const used = usage[dimension];
    const projected = Math.max(0, options.projected?.[dimension] ?? 0);
    const limit = limits[dimension];
    if (limit !== undefined && (projected > 0 ? used + projected > limit : used >= limit)) {
      return { ok: false, code: "budget_exceeded", dimension, used, limit };
    }
    const soft = options.softLimits?.[dimension];
    if (soft !== undefined && used + projected >= soft) warnings.push(dimension);
  }
  return { ok: true, warnings };
}

export type ToolQuotaCheck =
  | { ok: true }
  | {
      ok: false;
      code: "tool_quota_exceeded";
      toolName: string;
      window: "session" | "day";
      used: number;
      limit: number;
      /** Seed 003 audit reason. */
      auditReason: `tool_quota_exceeded:${string}`;
    };

/** Seed 003: checked before execution; one more call must fit under both the session and the day cap. */
export function checkToolQuota(toolName: string, quota: ToolQuota | undefined, counts: { session: number; day: number }): ToolQuotaCheck {
  const caps = [
    ["session", quota?.maxPerSession, counts.session],
    ["day", quota?.maxPerDay, counts.day],
  ] as const;
  for (const [window, limit, used] of caps) {
    if (limit !== undefined && used + 1 > limit) {
      return { ok: false, code: "tool_quota_exceeded", toolName, window, used, limit, auditReason: `tool_quota_exceeded:${toolName}` };
    }
  }
  return { ok: true };
}
