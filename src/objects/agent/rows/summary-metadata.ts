/**
 * Bytes per turn: a summary message's metadata would repeat its `summaries` row — two message ids
 * and a content hash of 64 characters each, the depth, the covered seqs and the contract version (~300 bytes per
 * summary). The row keeps them; the message stores `{"~": 1, …the rest}` and readers put them back, first and in this
 * order, from the row (`messageRow.summarySpan`). Summary rows are never deleted while their message exists (only
 * `condensed_into` changes, which the metadata does not hold).
 */
export const SPAN_KEYS = ["summaryDepth", "summaryStartMessageId", "summaryEndMessageId", "coveredFromSeq", "coveredThroughSeq", "summaryContentHash", "summarizerContractVersion"] as const;

const MARK = "~";

/** The span as the summaries row holds it, in `SPAN_KEYS` order (what `messageRow.summarySpan` selects as a JSON array). */
export type SummarySpan = readonly unknown[];

/** The metadata to store for a summary message whose summaries row will hold `span`; null when it cannot be restored exactly. */
export function leanSummaryMetadata(metadata: Record<string, unknown>, span: SummarySpan): Record<string, unknown> | null {
  const keys = Object.keys(metadata);
  if (MARK in metadata || SPAN_KEYS.some((key, i) => keys[i] !== key || JSON.stringify(metadata[key]) !== JSON.stringify(span[i]))) return null;
  const lean: Record<string, unknown> = { [MARK]: 1 };
  for (const key of keys.slice(SPAN_KEYS.length)) lean[key] = metadata[key];
  return JSON.stringify(summaryMetadata(lean, JSON.stringify(span))) === JSON.stringify(metadata) ? lean : null;
}

/** A summary message's metadata as written: the lean form with its span restored from the row; any other as it is. */
export function summaryMetadata(stored: Record<string, unknown>, spanJson: string | null | undefined): Record<string, unknown> {
  if (stored[MARK] !== 1 || typeof spanJson !== "string") return stored;
  const span = JSON.parse(spanJson) as unknown[];
  const out: Record<string, unknown> = {};
  SPAN_KEYS.forEach((key, i) => (out[key] = span[i]));
  for (const [key, value] of Object.entries(stored)) if (key !== MARK) out[key] = value;
  return out;
}
