import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  appendAttempt,
  backoffMs,
  classifyProviderFailure,
  DEFAULT_PROVIDER_RETRY_POLICY,
  deterministicJitter,
  emptyTimeline,
  nextAttemptDecision,
  parseRetryAfter,
  runProviderRound,
  succeededAttemptRecord,
  type AttemptResult,
  type ProviderCandidate,
  type ProviderFailureInput,
} from "../../src/core/runtime/provider-retry";

const http = (status: number, extra: Partial<Extract<ProviderFailureInput, { type: "http" }>> = {}): ProviderFailureInput => ({ type: "http", status, ...extra });

describe("classifyProviderFailure (seed 004 'Current retry policy')", () => {
  it("retries timeouts, connection failures, 429 and eligible 5xx", () => {
    expect(classifyProviderFailure({ type: "timeout" })).toEqual({ kind: "timeout", disposition: "retryable" });
    expect(classifyProviderFailure({ type: "connection" })).toEqual({ kind: "connection_failure", disposition: "retryable" });
    expect(classifyProviderFailure(http(429, { retryAfterMs: 2_000 }))).toEqual({ kind: "rate_limited", disposition: "retryable", status: 429, retryAfterMs: 2_000 });
    for (const status of [500, 502, 503, 504, 529]) expect(classifyProviderFailure(http(status)).disposition).toBe("retryable");
  });

  it("fails fast on 401/403, other 4xx, ineligible 5xx and bad shapes", () => {
    expect(classifyProviderFailure(http(401))).toMatchObject({ kind: "auth_failure", disposition: "fail_fast" });
    expect(classifyProviderFailure(http(403))).toMatchObject({ kind: "auth_failure", disposition: "fail_fast" });
    for (const status of [400, 404, 409, 422]) expect(classifyProviderFailure(http(status))).toMatchObject({ kind: "client_error", disposition: "fail_fast" });
    expect(classifyProviderFailure(http(501)).disposition).toBe("fail_fast");
    expect(classifyProviderFailure({ type: "invalid_response" })).toEqual({ kind: "invalid_response", disposition: "fail_fast" });
    expect(classifyProviderFailure({ type: "unsupported_transport" })).toMatchObject({ disposition: "fail_fast" });
    expect(classifyProviderFailure(http(200))).toMatchObject({ kind: "invalid_response", disposition: "fail_fast" });
  });

  it("treats context_length_exceeded as terminal for the whole round", () => {
    expect(classifyProviderFailure(http(400, { errorCode: "context_length_exceeded" }))).toMatchObject({ kind: "context_length_exceeded", disposition: "terminal" });
  });
});

describe("nextAttemptDecision", () => {
  const at = (attempt: number, candidateIndex = 0, candidateCount = 2) => ({ attempt, candidateIndex, candidateCount, jitter: 0.5 });
  const transient = classifyProviderFailure(http(503));

  it("retries at most twice on the same candidate, then falls back", () => {
    expect(nextAttemptDecision(transient, at(1))).toMatchObject({ action: "retry", outcome: "retrying", nextAttempt: 2 });
    expect(nextAttemptDecision(transient, at(2))).toMatchObject({ action: "retry", nextAttempt: 3 });
    expect(nextAttemptDecision(transient, at(3))).toEqual({ action: "fallback", outcome: "retries_exhausted", nextCandidateIndex: 1, advancedToFallback: true });
  });

  it("aborts only the current candidate on a fail-fast error", () => {
    expect(nextAttemptDecision(classifyProviderFailure(http(401)), at(1))).toMatchObject({ action: "fallback", outcome: "fail_fast_aborted" });
    expect(nextAttemptDecision(classifyProviderFailure(http(401)), at(1, 1, 2))).toEqual({
      action: "give_up",
      outcome: "fail_fast_aborted",
      code: "provider_failed",
      advancedToFallback: false,
    });
  });

  it("does not fall back on context_length_exceeded", () => {
    expect(nextAttemptDecision(classifyProviderFailure(http(400, { errorCode: "context_length_exceeded" })), at(1))).toMatchObject({
      action: "give_up",
      code: "context_length_exceeded",
    });
  });
});

describe("backoff", () => {
  it("doubles per retry within [ceiling/2, ceiling], deterministic in the jitter", () => {
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffMs(retry, 0))).toEqual([250, 500, 1_000, 2_000, 4_000, 4_000]);
    expect([1, 2, 3].map((retry) => backoffMs(retry, 0.999999))).toEqual([499, 999, 1_999]);
    expect(backoffMs(2, 0.5)).toBe(backoffMs(2, 0.5));
  });

  it("honours Retry-After as a floor, up to the cap", () => {
    expect(backoffMs(1, 0, DEFAULT_PROVIDER_RETRY_POLICY, 3_000)).toBe(3_000);
    expect(backoffMs(1, 0, DEFAULT_PROVIDER_RETRY_POLICY, 120_000)).toBe(30_000);
    expect(backoffMs(3, 0, DEFAULT_PROVIDER_RETRY_POLICY, 10)).toBe(1_000);
  });

  it("parses Retry-After seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5_000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("derives a stable jitter in [0, 1) from the run's fields", () => {
    expect(deterministicJitter("run1", "openai", 1)).toBe(deterministicJitter("run1", "openai", 1));
    expect(deterministicJitter("run1", "openai", 1)).not.toBe(deterministicJitter("run1", "openai", 2));
    fc.assert(
      fc.property(fc.string(), fc.nat(), (key, attempt) => {
        const j = deterministicJitter(key, attempt);
        expect(j).toBeGreaterThanOrEqual(0);
        expect(j).toBeLessThan(1);
      }),
    );
  });
});

describe("runProviderRound and the attempt timeline (seed 004 'Provider attempt timeline contract')", () => {
  const A: ProviderCandidate = { provider: "openai", modelRef: "openai:gpt-4o-mini" };
  const B: ProviderCandidate = { provider: "anthropic", modelRef: "anthropic:claude-haiku" };

  function scripted(script: Record<string, AttemptResult<string>[]>) {
    let clock = 1_700_000_000_000;
    const slept: number[] = [];
    const calls: string[] = [];
    return {
      slept,
      calls,
      effects: {
        async call(candidate: ProviderCandidate, attempt: number) {
          calls.push(`${candidate.provider}#${attempt}`);
          clock += 100;
          return script[candidate.provider]!.shift()!;
        },
        async sleep(ms: number) {
          slept.push(ms);
          clock += ms;
        },
        now: () => clock,
        jitter: () => 0,
      },
    };
  }

  it("exhausts retries on A, falls back to B, and records the whole history", async () => {
    const fail = (status: number): AttemptResult<string> => ({ ok: false, failure: http(status) });
    const run = scripted({
      openai: [fail(503), fail(429), fail(502)],
      anthropic: [{ ok: true, value: "hi", tokenUsage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } }],
    });
    const result = await runProviderRound([A, B], run.effects);
    expect(result.ok).toBe(true);
    expect(run.calls).toEqual(["openai#1", "openai#2", "openai#3", "anthropic#1"]);
    expect(run.slept).toEqual([250, 500]);
    const t = result.timeline;
    expect(t.attempts.map((a) => [a.model_ref, a.attempt, a.outcome, a.advanced_to_fallback, a.backoff_ms])).toEqual([
      ["openai:gpt-4o-mini", 1, "retrying", false, 250],
      ["openai:gpt-4o-mini", 2, "retrying", false, 500],
      ["openai:gpt-4o-mini", 3, "retries_exhausted", true, undefined],
      ["anthropic:claude-haiku", 1, "succeeded", false, undefined],
    ]);
    expect(t.attempts.every((a) => a.max_attempts === 3 && a.duration_ms === 100)).toBe(true);
    expect(t).toMatchObject({ requested_model_ref: "openai:gpt-4o-mini", winning_model_ref: "anthropic:claude-haiku", aggregated_token_usage: { total_tokens: 12 } });
    expect(t.attempts[0]).toMatchObject({ failure_kind: "server_error", disposition: "retryable" });
  });

  it("fails fast on 401 without retrying, and fails the round when no fallback is left", async () => {
    const run = scripted({ openai: [{ ok: false, failure: http(401) }] });
    const result = await runProviderRound([A], run.effects);
    expect(result).toMatchObject({ ok: false, code: "provider_failed", lastFailure: { kind: "auth_failure" } });
    expect(run.slept).toEqual([]);
    expect(result.timeline.attempts).toHaveLength(1);
    expect(result.timeline.attempts[0]).toMatchObject({ outcome: "fail_fast_aborted", advanced_to_fallback: false });
  });

  it("never makes more than 3 attempts per candidate whatever the failures", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<ProviderFailureInput>({ type: "timeout" }, { type: "connection" }, http(429), http(500), http(401), http(400), { type: "invalid_response" }), { minLength: 12, maxLength: 12 }),
        async (failures) => {
          const queue = [...failures];
          const run = scripted({});
          const result = await runProviderRound([A, B, { provider: "c", modelRef: "c:m" }], {
            ...run.effects,
            call: async (candidate, attempt) => {
              run.calls.push(`${candidate.provider}#${attempt}`);
              return { ok: false, failure: queue.shift()! };
            },
          });
          expect(result.ok).toBe(false);
          for (const provider of ["openai", "anthropic", "c"]) {
            expect(run.calls.filter((c) => c.startsWith(provider + "#")).length).toBeLessThanOrEqual(3);
          }
          const last = result.timeline.attempts.at(-1)!;
          expect(["retries_exhausted", "fail_fast_aborted"]).toContain(last.outcome);
        },
      ),
    );
  });

  it("keeps single successful attempts simple", () => {
    const record = succeededAttemptRecord(A, 1, { startedAtMs: 0, completedAtMs: 42 });
    const timeline = appendAttempt(emptyTimeline(A.modelRef), record);
    expect(timeline).toEqual({
      requested_model_ref: A.modelRef,
      active_model_ref: A.modelRef,
      winning_model_ref: A.modelRef,
      attempts: [{ provider: "openai", model_ref: A.modelRef, attempt: 1, max_attempts: 3, started_at: "1970-01-01T00:00:00.000Z", completed_at: "1970-01-01T00:00:00.042Z", duration_ms: 42, outcome: "succeeded", advanced_to_fallback: false }],
    });
  });
});
