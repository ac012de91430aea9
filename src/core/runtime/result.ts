/**
 * Results as values: what Durable Object methods and parts return instead of throwing. The codes are
 * stable (they never change once published); src/http/error-codes.ts maps each to its HTTP status.
 */
export const ERROR_CODES = [
  "validation_failed",
  "invalid_json",
  /** A memory slot value (or key) the slot rules refuse; `errors` names each issue. */
  "invalid_slot",
  "unauthorized",
  /** Webhook source ingress: unknown source, missing/malformed/forged signature. */
  "signature_invalid",
  /** Webhook source ingress: a valid signature outside the replay window. */
  "timestamp_stale",
  "forbidden",
  /** Inference gate, in gate order; none of them sends anything. */
  "out_of_scope",
  "model_not_allowed",
  "provider_not_allowed",
  "privacy_confirmation_required",
  "overshared_payload_blocked",
  /** Egress to a host that is neither a configured provider endpoint nor a tenant tool host. */
  "network_denied",
  /** Delegation admission refused (depth, concurrency, budget, kill switch). */
  "spawn_denied",
  "not_found",
  "method_not_allowed",
  "conflict",
  "version_conflict",
  "idempotency_conflict",
  "idempotency_in_progress",
  /** `POST /v1/decisions/:id/resolve` on a decision that is already resolved (or suspended/cancelled). */
  "decision_not_pending",
  "run_in_progress",
  "invalid_transition",
  "agent_dormant",
  "agent_not_started",
  "agent_destroyed",
  /** An event replay (SSE) from a cursor whose events were pruned by retention; `oldestSeq` is the oldest still kept. */
  "cursor_expired",
  "payload_too_large",
  "unsupported_media_type",
  /** A body names a record (journal parent, category, rating target) that does not exist. */
  "invalid_reference",
  /** A brake (kill switch) covers this agent, kind or tool. */
  "brake_engaged",
  /** The provider secret the endpoint references is missing, revoked or undecryptable. */
  "secret_unavailable",
  "rate_limited",
  /** A daily budget (tokens, cost, runtime, tool calls) is spent; resets at the tenant's next local midnight. */
  "budget_exceeded",
  "tool_quota_exceeded",
  "internal_error",
  /** The model provider failed after retries and every configured fallback. */
  "provider_error",
  /** The deployment lacks a required secret (VIGIL_MASTER_KEY missing or short): fails closed, see docs/operations.md. */
  "server_misconfigured",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A failure as a value. */
export type Failure = { ok: false; code: ErrorCode; message: string; retryAfterSeconds?: number; oldestSeq?: number };
export type Result<T> = ({ ok: true } & T) | Failure;

export const failure = (code: ErrorCode, message: string): Failure => ({ ok: false, code, message });
