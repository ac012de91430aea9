import { H } from "../ids/hash";

/**
 * Provider request retries and the attempt timeline (seed 004 "Current retry policy",
 * "Fallback rules", "Provider attempt timeline contract"). Retries stay inside one
 * provider candidate; then the next configured fallback (the tenant's explicit list) is tried.
 */

export interface ProviderRetryPolicy {
  /** Seed 004: max retries per provider request is 2, so 3 attempts per candidate. */
  maxRetries: number;
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Upper bound on honouring a provider's `Retry-After`. */
  maxRetryAfterMs: number;
}

export const DEFAULT_PROVIDER_RETRY_POLICY: ProviderRetryPolicy = {
  maxRetries: 2,
  baseBackoffMs: 500,
  maxBackoffMs: 8_000,
  maxRetryAfterMs: 30_000,
};

/** What went wrong with one attempt, as the gateway observed it. */
export type ProviderFailureInput =
  | { type: "timeout" }
  | { type: "connection" }
  | { type: "http"; status: number; retryAfterMs?: number; errorCode?: string }
  | { type: "invalid_response" }
  | { type: "unsupported_transport" };

export type ProviderFailureKind =
  | "timeout"
  | "connection_failure"
  | "rate_limited"
  | "server_error"
  | "auth_failure"
  | "client_error"
  | "invalid_response"
  | "unsupported_transport"
  | "context_length_exceeded";

/** `retryable`: same candidate again; `fail_fast`: abort this candidate only; `terminal`: abort the whole round. */
export type FailureDisposition = "retryable" | "fail_fast" | "terminal";

export interface ClassifiedFailure {
  kind: ProviderFailureKind;
  disposition: FailureDisposition;
  status?: number;
  retryAfterMs?: number;
}

// 501 and 505 say the server will never do this; retrying cannot help.
const INELIGIBLE_5XX = new Set([501, 505]);

/** Seed 004 classification: timeouts, connection failures, 429 and eligible 5xx retry; 401/403, other 4xx and bad shapes fail fast. */
export function classifyProviderFailure(input: ProviderFailureInput): ClassifiedFailure {
  switch (input.type) {
    case "timeout":
      return { kind: "timeout", disposition: "retryable" };
    case "connection":
      return { kind: "connection_failure", disposition: "retryable" };
    case "invalid_response":
      return { kind: "invalid_response", disposition: "fail_fast" };
    case "unsupported_transport":
      return { kind: "unsupported_transport", disposition: "fail_fast" };
    case "http":
      return classifyStatus(input.status, input.retryAfterMs, input.errorCode);
  }
}

function classifyStatus(status: number, retryAfterMs: number | undefined, errorCode: string | undefined): ClassifiedFailure {
  // Seed 004: context_length_exceeded is a turn-level terminal failure; a fallback would only repeat it.
  if (errorCode === "context_length_exceeded") return { kind: "context_length_exceeded", disposition: "terminal", status };
  if (status === 429) return { kind: "rate_limited", disposition: "retryable", status, ...(retryAfterMs !== undefined && { retryAfterMs }) };
  if (status === 408) return { kind: "timeout", disposition: "retryable", status };
  if (status === 401 || status === 403) return { kind: "auth_failure", disposition: "fail_fast", status };
  if (status >= 400 && status < 500) return { kind: "client_error", disposition: "fail_fast", status };
  if (status >= 500 && status < 600) {
    return { kind: "server_error", disposition: INELIGIBLE_5XX.has(status) ? "fail_fast" : "retryable", status };
  }
  return { kind: "invalid_response", disposition: "fail_fast", status };
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `nowMs`. */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header == null || header.trim() === "") return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * A deterministic jitter in [0, 1) from stable fields (e.g. runKey, provider, attempt), so a replayed
 * run waits exactly as long as the original did.
 */
export function deterministicJitter(...fields: ReadonlyArray<string | number>): number {
  return parseInt(H(...fields).slice(0, 8), 16) / 0x1_0000_0000;
}

/**
 * Exponential backoff with "equal jitter": half of base·2^(retry−1) (capped) is fixed, half scaled by `jitter`.
 * A provider's `Retry-After` is honoured as a floor, up to `maxRetryAfterMs`.
 */
export function backoffMs(retry: number, jitter: number, policy: ProviderRetryPolicy = DEFAULT_PROVIDER_RETRY_POLICY, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** Math.max(0, retry - 1));
  const unit = Math.min(Math.max(jitter, 0), 1);
  const computed = Math.floor(ceiling / 2 + (ceiling / 2) * unit);
  return retryAfterMs === undefined ? computed : Math.min(policy.maxRetryAfterMs, Math.max(computed, retryAfterMs));
}

export interface AttemptPosition {
  /** 1-based attempt number on the current candidate. */
  attempt: number;
  /** 0-based index of the current candidate in the configured list (primary first). */
  candidateIndex: number;
  candidateCount: number;
  /** In [0, 1); see {@link deterministicJitter}. */
  jitter: number;
}

export type NextAttemptDecision =
  | { action: "retry"; outcome: "retrying"; nextAttempt: number; backoffMs: number; advancedToFallback: false }
  | { action: "fallback"; outcome: "retries_exhausted" | "fail_fast_aborted"; nextCandidateIndex: number; advancedToFallback: true }
  | { action: "give_up"; outcome: "retries_exhausted" | "fail_fast_aborted"; code: "provider_failed" | "context_length_exceeded"; advancedToFallback: false };

/** After a failed attempt: retry the same candidate, move to the next fallback, or end the round. */
export function nextAttemptDecision(
  failure: ClassifiedFailure,
  position: AttemptPosition,
  policy: ProviderRetryPolicy = DEFAULT_PROVIDER_RETRY_POLICY,
): NextAttemptDecision {
  if (failure.disposition === "terminal") {
    return { action: "give_up", outcome: "fail_fast_aborted", code: "context_length_exceeded", advancedToFallback: false };
  }
  if (failure.disposition === "retryable" && position.attempt <= policy.maxRetries) {
    const wait = backoffMs(position.attempt, position.jitter, policy, failure.retryAfterMs);
    return { action: "retry", outcome: "retrying", nextAttempt: position.attempt + 1, backoffMs: wait, advancedToFallback: false };
  }
  const outcome = failure.disposition === "retryable" ? "retries_exhausted" : "fail_fast_aborted";
  const nextCandidateIndex = position.candidateIndex + 1;
  if (nextCandidateIndex < position.candidateCount) return { action: "fallback", outcome, nextCandidateIndex, advancedToFallback: true };
  return { action: "give_up", outcome, code: "provider_failed", advancedToFallback: false };
}

/** Seed 004 `ProviderAttemptOutcome`. */
export type ProviderAttemptOutcome = "retrying" | "retries_exhausted" | "fail_fast_aborted" | "succeeded";

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Seed 004 `ProviderAttemptRecord` (snake_case as in the seed's contract). */
export interface ProviderAttemptRecord {
  provider: string;
  model_ref: string;
  attempt: number;
  max_attempts: number;
  started_at?: string;
  completed_at?: string;
  /** The attempt itself, dispatch to complete response or error; backoff is separate. */
  duration_ms?: number;
  failure_kind?: ProviderFailureKind;
  disposition?: FailureDisposition;
  outcome: ProviderAttemptOutcome;
  advanced_to_fallback: boolean;
  /** The wait after this attempt before the next one. */
  backoff_ms?: number;
  token_usage?: TokenUsage;
}

/** Seed 004 `ProviderAttemptTimeline`. */
export interface ProviderAttemptTimeline {
  attempts: ProviderAttemptRecord[];
  requested_model_ref: string;
  active_model_ref?: string;
  winning_model_ref?: string;
  aggregated_token_usage?: TokenUsage;
}

export function emptyTimeline(requestedModelRef: string): ProviderAttemptTimeline {
  return { attempts: [], requested_model_ref: requestedModelRef };
}

/** Appends one attempt, keeping `active_model_ref`, `winning_model_ref` and the token total current. */
export function appendAttempt(timeline: ProviderAttemptTimeline, record: ProviderAttemptRecord): ProviderAttemptTimeline {
  const next: ProviderAttemptTimeline = { ...timeline, attempts: [...timeline.attempts, record], active_model_ref: record.model_ref };
  if (record.outcome === "succeeded") next.winning_model_ref = record.model_ref;
  if (record.token_usage !== undefined) {
    const sum = timeline.aggregated_token_usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    next.aggregated_token_usage = {
      input_tokens: sum.input_tokens + record.token_usage.input_tokens,
      output_tokens: sum.output_tokens + record.token_usage.output_tokens,
      total_tokens: sum.total_tokens + record.token_usage.total_tokens,
    };
  }
  return next;
}

export interface AttemptTiming {
  startedAtMs: number;
  completedAtMs: number;
}

/** The timeline entry for a failed attempt and the decision taken after it. */
export function failedAttemptRecord(
  candidate: { provider: string; modelRef: string },
  attempt: number,
  timing: AttemptTiming,
  failure: ClassifiedFailure,
  decision: NextAttemptDecision,
  policy: ProviderRetryPolicy = DEFAULT_PROVIDER_RETRY_POLICY,
): ProviderAttemptRecord {
  return {
    ...timed(candidate, attempt, timing, policy),
    failure_kind: failure.kind,
    disposition: failure.disposition,
    outcome: decision.outcome,
    advanced_to_fallback: decision.advancedToFallback,
    ...(decision.action === "retry" && { backoff_ms: decision.backoffMs }),
  };
}

/** The timeline entry for the attempt that answered. */
export function succeededAttemptRecord(
  candidate: { provider: string; modelRef: string },
  attempt: number,
  timing: AttemptTiming,
  tokenUsage?: TokenUsage,
  policy: ProviderRetryPolicy = DEFAULT_PROVIDER_RETRY_POLICY,
): ProviderAttemptRecord {
  return {
    ...timed(candidate, attempt, timing, policy),
    outcome: "succeeded",
    advanced_to_fallback: false,
    ...(tokenUsage !== undefined && { token_usage: tokenUsage }),
  };
}

function timed(candidate: { provider: string; modelRef: string }, attempt: number, timing: AttemptTiming, policy: ProviderRetryPolicy) {
  return {
    provider: candidate.provider,
    model_ref: candidate.modelRef,
    attempt,
    max_attempts: policy.maxRetries + 1,
    started_at: new Date(timing.startedAtMs).toISOString(),
    completed_at: new Date(timing.completedAtMs).toISOString(),
    duration_ms: Math.max(0, timing.completedAtMs - timing.startedAtMs),
  };
}

export interface ProviderCandidate {
  provider: string;
  modelRef: string;
}

export type AttemptResult<T> = { ok: true; value: T; tokenUsage?: TokenUsage } | { ok: false; failure: ProviderFailureInput };

/** The effects a round needs, injected so the loop itself stays deterministic and testable. */
export interface ProviderRoundEffects<T> {
  call(candidate: ProviderCandidate, attempt: number): Promise<AttemptResult<T>>;
  sleep(ms: number): Promise<void>;
  now(): number;
  jitter(candidateIndex: number, attempt: number): number;
}

export type ProviderRoundResult<T> =
  | { ok: true; value: T; timeline: ProviderAttemptTimeline }
  | { ok: false; code: "provider_failed" | "context_length_exceeded"; lastFailure: ClassifiedFailure; timeline: ProviderAttemptTimeline };

/** Runs one provider round over the configured candidates (primary first), keeping the attempt timeline. */
export async function runProviderRound<T>(
  candidates: readonly ProviderCandidate[],
  effects: ProviderRoundEffects<T>,
  policy: ProviderRetryPolicy = DEFAULT_PROVIDER_RETRY_POLICY,
): Promise<ProviderRoundResult<T>> {
  const first = candidates[0];
  if (first === undefined) throw new RangeError("runProviderRound: candidates must not be empty");
  let timeline = emptyTimeline(first.modelRef);
  let candidateIndex = 0;
  let attempt = 1;
  for (;;) {
    const candidate = candidates[candidateIndex]!;
    const startedAtMs = effects.now();
    const result = await effects.call(candidate, attempt);
    const timing = { startedAtMs, completedAtMs: effects.now() };
    if (result.ok) {
      timeline = appendAttempt(timeline, succeededAttemptRecord(candidate, attempt, timing, result.tokenUsage, policy));
      return { ok: true, value: result.value, timeline };
    }
    const failure = classifyProviderFailure(result.failure);
    const position = { attempt, candidateIndex, candidateCount: candidates.length, jitter: effects.jitter(candidateIndex, attempt) };
    const decision = nextAttemptDecision(failure, position, policy);
    timeline = appendAttempt(timeline, failedAttemptRecord(candidate, attempt, timing, failure, decision, policy));
    if (decision.action === "give_up") return { ok: false, code: decision.code, lastFailure: failure, timeline };
    if (decision.action === "retry") {
      await effects.sleep(decision.backoffMs);
      attempt = decision.nextAttempt;
    } else {
      candidateIndex = decision.nextCandidateIndex;
      attempt = 1;
    }
  }
}
