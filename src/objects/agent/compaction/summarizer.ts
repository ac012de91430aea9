/**
 * Which text a compaction attempt commits (seed 000 §3 "Compaction producer"): the LLM path with the
 * fixed prompt contract (`summary.llm.v1`) through the agent's own model, or the deterministic
 * extractive fallback (`summary.extractive.v1`) on rate limit, budget gate or outage, or once the
 * attempt count reaches the fallback threshold.
 */
import { chooseSummarizer, type CompactionRetryPolicy, type SummarizerGate } from "../../../core/memory/compaction-job";
import {
  buildSummarizerPrompt,
  extractiveSummary,
  SUMMARIZER_CONTRACT_VERSIONS,
  validateLlmSummary,
  type SummarizableItem,
  type SummarizerKind,
} from "../../../core/memory/summary";

/**
 * A remote text completion (the gateway's). It throws on failure; an error carrying a string `code`
 * is a gateway verdict (rate limit, budget, policy, provider failure), anything else a plain failure.
 */
export type TextCompletion = (request: { modelId: string; system: string; prompt: string; maxOutputTokens: number }) => Promise<string>;

export interface SummarizeRequest {
  modelId: string;
  summaryDepth: number;
  /** The attempt number of the claimed job (1 for the first attempt). */
  attemptCount: number;
  items: ReadonlyArray<SummarizableItem>;
}

export interface SummaryText {
  summarizer: SummarizerKind;
  summarizerContractVersion: string;
  text: string;
  /** Why this summarizer was used (`llm_available`, `retry_threshold`, `rate_limited`, …). */
  reason: string;
}

/** A failed attempt that should be retried with backoff (not a reason to fall back at once). */
export class SummarizerAttemptFailed extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const RATE_LIMIT_CODES = new Set(["rate_limited", "provider_rate_limited"]);
const BUDGET_CODES = new Set(["budget_exceeded", "tool_quota_exceeded", "brake_engaged"]);

/**
 * Maps a completion error onto the seed's three reasons to use the fallback. Any gateway verdict
 * other than a rate limit or a budget gate (provider failure, timeout, a policy gate such as a
 * missing secret) means the LLM path is unavailable right now: an outage, as far as compaction goes.
 */
export function gateOf(error: unknown): SummarizerGate | null {
  const code = error && typeof error === "object" && "code" in error && typeof error.code === "string" ? error.code : null;
  const status = error && typeof error === "object" && "status" in error && typeof error.status === "number" ? error.status : null;
  if ((code && RATE_LIMIT_CODES.has(code)) || status === 429) return "rate_limited";
  if (code && BUDGET_CODES.has(code)) return "budget_denied";
  if (code || status !== null) return "provider_outage";
  return null;
}

/**
 * The builtin models' "LLM" summary: offline and deterministic like the builtin models themselves,
 * produced under the LLM contract version so a builtin agent exercises the primary path.
 */
export function builtinSummary(items: ReadonlyArray<SummarizableItem>): string {
  const kinds = new Map<string, number>();
  for (const item of items) kinds.set(item.kind, (kinds.get(item.kind) ?? 0) + 1);
  const tally = [...kinds.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([kind, n]) => `${n} ${kind}`).join(", ");
  const body = extractiveSummary(items, { maxChars: 1_200 }).split("\n").slice(1).join("\n");
  return `Summary (builtin model) of ${items.length} item(s): ${tally}.\n${body}`;
}

export class Summarizer {
  constructor(
    private readonly policy: CompactionRetryPolicy,
    private readonly complete: TextCompletion | null,
  ) {}

  async summarize(request: SummarizeRequest): Promise<SummaryText> {
    const planned = chooseSummarizer({ attemptCount: request.attemptCount }, "available", this.policy);
    if (planned.summarizer === "extractive") return this.extractive(request, planned.reason);
    if (request.modelId.startsWith("builtin:")) {
      return { summarizer: "llm", summarizerContractVersion: SUMMARIZER_CONTRACT_VERSIONS.llm, text: builtinSummary(request.items), reason: planned.reason };
    }
    // No gateway completion wired: the LLM path is unavailable, which is the seed's outage case.
    if (!this.complete) return this.extractive(request, "provider_outage");
    const prompt = buildSummarizerPrompt({ summaryDepth: request.summaryDepth, items: request.items });
    let answer: string;
    try {
      answer = await this.complete({ modelId: request.modelId, system: prompt.system, prompt: prompt.prompt, maxOutputTokens: 1_024 });
    } catch (error) {
      const gate = gateOf(error);
      if (gate === null) throw error;
      return this.extractive(request, chooseSummarizer({ attemptCount: request.attemptCount }, gate, this.policy).reason);
    }
    const checked = validateLlmSummary(answer);
    if (!checked.ok) throw new SummarizerAttemptFailed(checked.code);
    return { summarizer: "llm", summarizerContractVersion: prompt.summarizerContractVersion, text: checked.text, reason: planned.reason };
  }

  private extractive(request: SummarizeRequest, reason: string): SummaryText {
    return { summarizer: "extractive", summarizerContractVersion: SUMMARIZER_CONTRACT_VERSIONS.extractive, text: extractiveSummary(request.items), reason };
  }
}
