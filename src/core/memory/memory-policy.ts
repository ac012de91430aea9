/**
 * Memory tiers (seed 000 §3 "Memory policy"): hot = recent raw messages bounded by count AND
 * estimated tokens; warm = depth-0 summaries over raw spans; cold = summaries of summaries
 * (`summaryDepth` ≥ 1). Every function here reads bounded inputs the shell already loaded, so its
 * cost never grows with an agent's history.
 */

/** The kinds of message an agent's history holds. */
export type MemoryMessageKind =
  | "observation"
  | "user"
  | "assistant"
  | "thought"
  | "action"
  | "toolResult"
  | "summary"
  | "system";

/** A raw message as memory sees it; `seq` is the agent-wide append order (messages.seq). */
export interface MemoryMessage {
  id: string;
  seq: number;
  threadId: string;
  kind: MemoryMessageKind;
  /** What the model would see; the shell renders structured content to text first. */
  text: string;
}

/** A raw message's identity and stored token estimate, for planning without loading its text. */
export interface MessageTokenRef {
  id: string;
  seq: number;
  tokens: number;
}

/** Seed 000 span identity of a summary: which messages of which thread, at which depth. */
export interface SummarySpan {
  agentId: string;
  threadId: string;
  startMessageId: string;
  endMessageId: string;
  summaryDepth: number;
}

/** A span with its ordering bounds: `startSeq`/`endSeq` of the spanned rows, `covered*` in raw-message seqs. */
export interface CompactionSpan extends SummarySpan {
  startSeq: number;
  endSeq: number;
  coveredFromSeq: number;
  coveredThroughSeq: number;
}

/** A committed summary message (warm when `summaryDepth` = 0, cold above). */
export interface SummaryRef {
  messageId: string;
  /** This summary row's own append seq. */
  seq: number;
  threadId: string;
  summaryDepth: number;
  startMessageId: string;
  endMessageId: string;
  /** Raw-message seqs the summary covers, transitively for summaries of summaries. */
  coveredFromSeq: number;
  coveredThroughSeq: number;
  text: string;
}

/** Limits for the three tiers. */
export interface MemoryLimits {
  hotMaxMessages: number;
  hotMaxTokens: number;
  /** After a compaction the hot tier is brought down to this fraction of its limits (hysteresis). */
  compactionTargetRatio: number;
  /** Largest raw span one summary covers; also the most rows `planCompaction` needs read. */
  compactionMaxSpanMessages: number;
  /** Above this many uncondensed summaries at one depth, the oldest are condensed one depth up. */
  maxSummariesPerDepth: number;
  /** How many depth-d summaries one depth-(d+1) summary condenses (≥ 2). */
  condenseBatchSize: number;
  maxSummaryDepth: number;
}

/** Defaults; see docs/decisions/memory-core.md. */
export const DEFAULT_MEMORY_LIMITS: MemoryLimits = {
  hotMaxMessages: 40,
  hotMaxTokens: 6_000,
  compactionTargetRatio: 0.75,
  compactionMaxSpanMessages: 50,
  maxSummariesPerDepth: 8,
  condenseBatchSize: 4,
  maxSummaryDepth: 3,
};

/** Validates limits when they are configured, naming the field (agents SDK `retries.ts` style). */
export function validateMemoryLimits(
  limits: MemoryLimits,
): { ok: true; limits: MemoryLimits } | { ok: false; code: "invalid_memory_limits"; field: keyof MemoryLimits; message: string } {
  const positive: Array<keyof MemoryLimits> = ["hotMaxMessages", "hotMaxTokens", "compactionMaxSpanMessages", "maxSummariesPerDepth"];
  for (const field of positive) {
    const value = limits[field];
    if (!Number.isInteger(value) || value < 1) return { ok: false, code: "invalid_memory_limits", field, message: `${field} must be an integer >= 1` };
  }
  if (!Number.isInteger(limits.condenseBatchSize) || limits.condenseBatchSize < 2) {
    return { ok: false, code: "invalid_memory_limits", field: "condenseBatchSize", message: "condenseBatchSize must be an integer >= 2" };
  }
  if (!Number.isInteger(limits.maxSummaryDepth) || limits.maxSummaryDepth < 0) {
    return { ok: false, code: "invalid_memory_limits", field: "maxSummaryDepth", message: "maxSummaryDepth must be an integer >= 0" };
  }
  if (!(limits.compactionTargetRatio > 0 && limits.compactionTargetRatio <= 1)) {
    return { ok: false, code: "invalid_memory_limits", field: "compactionTargetRatio", message: "compactionTargetRatio must be in (0, 1]" };
  }
  return { ok: true, limits };
}

/** Fixed per-item framing cost (role, separators) added to every estimate. */
export const ITEM_OVERHEAD_TOKENS = 4;
const BYTES_PER_TOKEN = 4;
const ELLIPSIS = "…";

function codePointBytes(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  // Lone surrogates encode as U+FFFD (3 bytes), which this branch also covers.
  if (codePoint < 0x10000) return 3;
  return 4;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Longer texts take the loop below: the scratch buffer stays ≤ 96 KiB per isolate. */
const ENCODE_MAX_UNITS = 32 * 1024;
const encoder = new TextEncoder();
let scratch = new Uint8Array(3 * 1024);

/** A UTF-16 surrogate without its pair (`String.prototype.isWellFormed` is not in the project's TypeScript lib). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether SQLite would store `text` differently from the string itself: a lone surrogate becomes U+FFFD in UTF-8. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/**
 * UTF-8 length of `text` without allocating an encoded copy: the native encoder into a kept buffer, or for a long text
 * a UTF-16 code-unit loop (the string iterator, one string allocation per code point, made token counting most of a
 * context assembly's cost). A surrogate pair is one 4-byte code point; a lone surrogate counts 3 (U+FFFD).
 */
export function utf8ByteLength(text: string): number {
  // Most text (and every summary label) is ASCII: one native regex test instead of a JS loop per code unit.
  if (!NON_ASCII.test(text)) return text.length;
  const length = text.length;
  // Up to a bound, the native encoder into a kept scratch buffer: a summary's text holds an ellipsis or a dash, and each
  // assemble counts a dozen of them (~2.4 → ~1.4 µs per KiB). Every code unit encodes to ≤ 3 bytes (a pair
  // to 4 for its two), so `3 × length` bytes always hold the whole text; the encoder writes a lone surrogate as U+FFFD.
  if (length <= ENCODE_MAX_UNITS) {
    if (scratch.length < 3 * length) scratch = new Uint8Array(Math.min(3 * ENCODE_MAX_UNITS, Math.max(3 * length, 2 * scratch.length)));
    return encoder.encodeInto(text, scratch).written;
  }
  let bytes = length;
  for (let i = 0; i < length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // two units, 4 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * Deterministic token estimate: `ceil(utf8Bytes / 4) + 4`. UTF-8 bytes rather than UTF-16 chars so
 * that CJK and emoji (fewer chars, more tokens) are not underestimated; no tokenizer, so every
 * replica and every provider gets the same number.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(utf8ByteLength(text) / BYTES_PER_TOKEN) + ITEM_OVERHEAD_TOKENS;
}

/**
 * Cuts `text` at a code-point boundary so that `estimateTokens(result) <= maxTokens`, marking the cut
 * with "…". Returns the text unchanged when it fits and `null` when not even the marker fits.
 */
export function truncateToTokens(text: string, maxTokens: number): string | null {
  const budgetBytes = (Math.floor(maxTokens) - ITEM_OVERHEAD_TOKENS) * BYTES_PER_TOKEN;
  if (utf8ByteLength(text) <= budgetBytes) return text;
  const keepBytes = budgetBytes - utf8ByteLength(ELLIPSIS);
  if (keepBytes < 1) return null;
  let used = 0;
  let end = 0;
  for (const char of text) {
    const size = codePointBytes(char.codePointAt(0)!);
    if (used + size > keepBytes) break;
    used += size;
    end += char.length;
  }
  return end === 0 ? null : text.slice(0, end) + ELLIPSIS;
}

/** The selected hot tier and why selection stopped. */
export interface HotWindow {
  /** Chronological (oldest first), a contiguous newest suffix of the input. */
  messages: MemoryMessage[];
  tokens: number;
  stoppedBy: "exhausted" | "count" | "tokens";
}

/**
 * Picks the hot window from the newest raw messages: newest first until the next one would break the
 * count or token bound. It stops at the first misfit instead of skipping it, so the window has no gaps.
 */
export function selectHotWindow(
  recentMessagesNewestFirst: ReadonlyArray<MemoryMessage>,
  limits: Pick<MemoryLimits, "hotMaxMessages" | "hotMaxTokens">,
): HotWindow {
  const picked: MemoryMessage[] = [];
  let tokens = 0;
  let stoppedBy: HotWindow["stoppedBy"] = "exhausted";
  for (const message of recentMessagesNewestFirst) {
    if (picked.length >= limits.hotMaxMessages) {
      stoppedBy = "count";
      break;
    }
    const cost = estimateTokens(message.text);
    if (tokens + cost > limits.hotMaxTokens) {
      stoppedBy = "tokens";
      break;
    }
    picked.push(message);
    tokens += cost;
  }
  return { messages: picked.reverse(), tokens, stoppedBy };
}

/** What the shell knows about one thread's raw messages after its last summary (two bounded queries). */
export interface ThreadCompactionStats {
  agentId: string;
  threadId: string;
  /** Oldest first, starting right after the last summarized seq; at most `compactionMaxSpanMessages` rows. */
  oldestUncompacted: ReadonlyArray<MessageTokenRef>;
  /** COUNT and SUM(tokens) over every raw message after the last summarized seq. */
  uncompactedCount: number;
  uncompactedTokens: number;
}

/** A tier-overflow decision: nothing to do, or one span to summarize. */
export type CompactionPlan =
  | { action: "none"; reason: "within_limits" | "nothing_to_compact" | "depth_cap" }
  | { action: "compact"; span: CompactionSpan; trigger: "count" | "tokens" | "count_and_tokens"; itemCount: number; tokens: number };

/**
 * Decides whether the hot tier of a thread is exceeded and which oldest raw span `[start, end]` to
 * summarize: the shortest oldest prefix that brings the rest under `compactionTargetRatio` × limits,
 * capped at `compactionMaxSpanMessages`. The newest raw message is never summarized, so the hot tier
 * always keeps the latest turn verbatim.
 */
export function planCompaction(stats: ThreadCompactionStats, limits: MemoryLimits): CompactionPlan {
  const overCount = stats.uncompactedCount > limits.hotMaxMessages;
  const overTokens = stats.uncompactedTokens > limits.hotMaxTokens;
  if (!overCount && !overTokens) return { action: "none", reason: "within_limits" };
  const targetCount = Math.floor(limits.hotMaxMessages * limits.compactionTargetRatio);
  const targetTokens = Math.floor(limits.hotMaxTokens * limits.compactionTargetRatio);
  const maxTake = Math.min(stats.oldestUncompacted.length, limits.compactionMaxSpanMessages, stats.uncompactedCount - 1);
  if (maxTake < 1) return { action: "none", reason: "nothing_to_compact" };
  let take = 0;
  let removedTokens = 0;
  while (take < maxTake) {
    removedTokens += stats.oldestUncompacted[take]!.tokens;
    take += 1;
    if (stats.uncompactedCount - take <= targetCount && stats.uncompactedTokens - removedTokens <= targetTokens) break;
  }
  const first = stats.oldestUncompacted[0]!;
  const last = stats.oldestUncompacted[take - 1]!;
  return {
    action: "compact",
    span: {
      agentId: stats.agentId,
      threadId: stats.threadId,
      startMessageId: first.id,
      endMessageId: last.id,
      summaryDepth: 0,
      startSeq: first.seq,
      endSeq: last.seq,
      coveredFromSeq: first.seq,
      coveredThroughSeq: last.seq,
    },
    trigger: overCount && overTokens ? "count_and_tokens" : overCount ? "count" : "tokens",
    itemCount: take,
    tokens: removedTokens,
  };
}

/**
 * Seed 000: "cross-thread summaries are only created as second-order compaction artifacts". Summaries
 * of summaries therefore live on one reserved per-agent thread, which also makes condensation
 * single-flight per agent.
 */
export function memoryThreadId(agentId: string): string {
  return `${agentId}:memory`;
}

/** Depth-d summaries not yet condensed into a depth-(d+1) summary. */
export interface DepthCondensationStats {
  agentId: string;
  summaryDepth: number;
  /** Oldest first (by seq); at most `condenseBatchSize` rows. */
  oldestUncondensed: ReadonlyArray<SummaryRef>;
  uncondensedCount: number;
}

/**
 * Cold tier: when more than `maxSummariesPerDepth` depth-d summaries are uncondensed, plans one
 * summary-of-summaries at depth d+1 over the oldest `condenseBatchSize` of them.
 */
export function planCondensation(stats: DepthCondensationStats, limits: MemoryLimits): CompactionPlan {
  if (stats.summaryDepth + 1 > limits.maxSummaryDepth) return { action: "none", reason: "depth_cap" };
  if (stats.uncondensedCount <= limits.maxSummariesPerDepth) return { action: "none", reason: "within_limits" };
  const batch = stats.oldestUncondensed.slice(0, limits.condenseBatchSize);
  if (batch.length < 2) return { action: "none", reason: "nothing_to_compact" };
  const first = batch[0]!;
  const last = batch[batch.length - 1]!;
  return {
    action: "compact",
    span: {
      agentId: stats.agentId,
      threadId: memoryThreadId(stats.agentId),
      startMessageId: first.messageId,
      endMessageId: last.messageId,
      summaryDepth: stats.summaryDepth + 1,
      startSeq: first.seq,
      endSeq: last.seq,
      coveredFromSeq: Math.min(...batch.map((summary) => summary.coveredFromSeq)),
      coveredThroughSeq: Math.max(...batch.map((summary) => summary.coveredThroughSeq)),
    },
    trigger: "count",
    itemCount: batch.length,
    tokens: batch.reduce((sum, summary) => sum + estimateTokens(summary.text), 0),
  };
}
