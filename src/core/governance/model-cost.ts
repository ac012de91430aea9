/**
 * Cost of one model call in integer micro-USD (millionths of a dollar) from an endpoint's pricing
 * in USD per million tokens: one token at P USD/MTok costs exactly P micro-USD. Integers, so daily
 * sums carry no float drift; rounded once per call.
 */
export interface ModelPrice {
  inputUsdPerMTok: number;
  outputUsdPerMTok: number;
}

export function costMicros(usage: { inputTokens: number; outputTokens: number }, price: ModelPrice | undefined): number {
  if (!price) return 0;
  const micros = Math.max(0, usage.inputTokens) * price.inputUsdPerMTok + Math.max(0, usage.outputTokens) * price.outputUsdPerMTok;
  return Math.round(micros);
}
