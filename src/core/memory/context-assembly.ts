/**
 * Assembles a run's memory context (seed 000 Phase 3 "memory assembler") from slots, the latest
 * report, cold and warm summaries and hot raw messages, under a token budget. Inputs are the bounded
 * windows the shell reads; each list is clamped again here, so the cost is flat in history length.
 */
import { estimateTokens, truncateToTokens, type MemoryMessage, type MemoryMessageKind, type SummaryRef } from "./memory-policy";
import { renderReport, type AgentReport, type ReportScope } from "./reports";
import { renderSlots, type AgentSlots } from "./slots";

/** Token budget and per-tier caps of one run's memory context. */
export interface ContextBudget {
  maxTokens: number;
  maxHotMessages: number;
  maxWarmSummaries: number;
  maxColdSummaries: number;
  /** Caps for the two pinned blocks, so neither can starve the conversation. */
  maxSlotsTokens: number;
  maxReportTokens: number;
  /** A truncated item smaller than this carries too little to be worth its overhead; it is left out. */
  minTruncatedTokens: number;
}

/** Defaults; see docs/decisions/memory-core.md. */
export const DEFAULT_CONTEXT_BUDGET: ContextBudget = {
  maxTokens: 12_000,
  maxHotMessages: 40,
  maxWarmSummaries: 8,
  maxColdSummaries: 4,
  maxSlotsTokens: 1_500,
  maxReportTokens: 1_000,
  minTruncatedTokens: 16,
};

/** The bounded windows the shell loaded for one run. */
export interface ContextInputs {
  slots: AgentSlots | null;
  /** The latest report with its freshness verdict (`reportFreshness`); a stale one is marked. */
  report: { report: AgentReport; fresh: boolean } | null;
  /** Newest first, each list bounded by the shell's read. */
  coldSummaries: ReadonlyArray<SummaryRef>;
  warmSummaries: ReadonlyArray<SummaryRef>;
  /** Raw messages of the active thread after its last summary, newest first. */
  hotMessages: ReadonlyArray<MemoryMessage>;
}

/** One block of the assembled context, with its estimated tokens. */
export type ContextItem =
  | { kind: "slots"; text: string; tokens: number; truncated: boolean }
  | { kind: "report"; reportId: string; scope: ReportScope; fresh: boolean; text: string; tokens: number; truncated: boolean }
  | { kind: "summary"; tier: "cold" | "warm"; messageId: string; summaryDepth: number; text: string; tokens: number }
  | { kind: "message"; messageId: string; seq: number; messageKind: MemoryMessageKind; text: string; tokens: number; truncated: boolean };

/** The context a run hands to the model, plus what was left out. */
export interface AssembledContext {
  /** Stable order: slots, report, cold summaries, warm summaries, hot messages; each tier oldest first. */
  items: ContextItem[];
  tokens: number;
  /** How much of each clamped input did not fit. */
  omitted: { slots: boolean; report: boolean; cold: number; warm: number; hot: number };
}

function clampNewestFirst<T extends { seq: number }>(list: ReadonlyArray<T>, max: number, key: (item: T) => string, seen: Set<string>): T[] {
  const kept: T[] = [];
  for (const item of list.slice(0, Math.max(0, max))) {
    if (seen.has(key(item))) continue;
    seen.add(key(item));
    kept.push(item);
  }
  return kept.sort((a, b) => b.seq - a.seq);
}

/**
 * Fills the budget in priority order — the newest hot message, slots, report, older hot messages,
 * warm then cold summaries — and renders in a stable order. Only the newest message, slots and the
 * report may be truncated; hot messages and summaries stop at the first misfit so no tier has gaps.
 * Invariant: `tokens ≤ budget.maxTokens` and equals the sum of `estimateTokens(item.text)`.
 */
export function assembleContext(inputs: ContextInputs, budget: ContextBudget = DEFAULT_CONTEXT_BUDGET): AssembledContext {
  let remaining = Math.max(0, Math.floor(budget.maxTokens));
  const fit = (text: string, cap: number, truncatable: boolean): { text: string; tokens: number; truncated: boolean } | null => {
    const allowance = Math.min(remaining, cap);
    const cost = estimateTokens(text);
    if (cost <= allowance) {
      remaining -= cost;
      return { text, tokens: cost, truncated: false };
    }
    if (!truncatable || allowance < budget.minTruncatedTokens) return null;
    const cut = truncateToTokens(text, allowance);
    if (cut === null) return null;
    const tokens = estimateTokens(cut);
    remaining -= tokens;
    return { text: cut, tokens, truncated: true };
  };

  const summaryIds = new Set<string>();
  const cold = clampNewestFirst(inputs.coldSummaries, budget.maxColdSummaries, (s) => s.messageId, summaryIds);
  const warm = clampNewestFirst(inputs.warmSummaries, budget.maxWarmSummaries, (s) => s.messageId, summaryIds);
  const hot = clampNewestFirst(inputs.hotMessages, budget.maxHotMessages, (m) => m.id, new Set());

  const hotItems: ContextItem[] = [];
  const toMessage = (message: MemoryMessage, fitted: { text: string; tokens: number; truncated: boolean }): ContextItem => ({
    kind: "message",
    messageId: message.id,
    seq: message.seq,
    messageKind: message.kind,
    ...fitted,
  });
  const newest = hot[0];
  if (newest) {
    const fitted = fit(newest.text, Infinity, true);
    if (fitted) hotItems.push(toMessage(newest, fitted));
  }

  let slotsItem: ContextItem | null = null;
  const slotsText = inputs.slots ? renderSlots(inputs.slots) : "";
  if (slotsText) {
    const fitted = fit(slotsText, budget.maxSlotsTokens, true);
    if (fitted) slotsItem = { kind: "slots", ...fitted };
  }

  let reportItem: ContextItem | null = null;
  if (inputs.report) {
    const { report, fresh } = inputs.report;
    const fitted = fit((fresh ? "" : "[stale] ") + renderReport(report), budget.maxReportTokens, true);
    if (fitted) reportItem = { kind: "report", reportId: report.id, scope: report.scope, fresh, ...fitted };
  }

  if (hotItems.length === 1) {
    for (const message of hot.slice(1)) {
      const fitted = fit(message.text, Infinity, false);
      if (!fitted) break;
      hotItems.push(toMessage(message, fitted));
    }
  }

  const takeSummaries = (list: SummaryRef[], tier: "cold" | "warm"): ContextItem[] => {
    const taken: ContextItem[] = [];
    for (const summary of list) {
      const label = `[${tier} summary depth ${summary.summaryDepth}, messages ${summary.coveredFromSeq}–${summary.coveredThroughSeq}] `;
      const fitted = fit(label + summary.text, Infinity, false);
      if (!fitted) break;
      taken.push({ kind: "summary", tier, messageId: summary.messageId, summaryDepth: summary.summaryDepth, text: fitted.text, tokens: fitted.tokens });
    }
    return taken;
  };
  const warmItems = takeSummaries(warm, "warm");
  const coldItems = takeSummaries(cold, "cold");

  const items: ContextItem[] = [
    ...(slotsItem ? [slotsItem] : []),
    ...(reportItem ? [reportItem] : []),
    ...coldItems.reverse(),
    ...warmItems.reverse(),
    ...hotItems.reverse(),
  ];
  return {
    items,
    tokens: items.reduce((sum, item) => sum + item.tokens, 0),
    omitted: {
      slots: slotsText !== "" && slotsItem === null,
      report: inputs.report !== null && reportItem === null,
      cold: cold.length - coldItems.length,
      warm: warm.length - warmItems.length,
      hot: hot.length - hotItems.length,
    },
  };
}
