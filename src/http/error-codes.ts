import type { ErrorCode } from "../core/runtime/result";

// Re-exported so code written against the old location still compiles; new code imports src/core/runtime/result.
export { failure, type ErrorCode, type Failure, type Result } from "../core/runtime/result";

/** Each stable error code's HTTP status (the codes and Result live in src/core/runtime/result.ts). */
export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  /** A memory slot value (or key) the slot rules refuse; `errors` names each issue. */
  invalid_slot: 400,
  unauthorized: 401,
  /** Webhook source ingress: unknown source, missing/malformed/forged signature. */
  signature_invalid: 401,
  /** Webhook source ingress: a valid signature outside the replay window. */
  timestamp_stale: 401,
  forbidden: 403,
  /** Inference gate, in gate order; none of them sends anything. */
  out_of_scope: 403,
  model_not_allowed: 403,
  provider_not_allowed: 403,
  privacy_confirmation_required: 403,
  overshared_payload_blocked: 403,
  /** Egress to a host that is neither a configured provider endpoint nor a tenant tool host. */
  network_denied: 403,
  /** Delegation admission refused (depth, concurrency, budget, kill switch). */
  spawn_denied: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  version_conflict: 409,
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  /** `POST /v1/decisions/:id/resolve` on a decision that is already resolved (or suspended/cancelled). */
  decision_not_pending: 409,
  /** Double texting `reject`: a run of the message's session is still in flight. */
  run_in_progress: 409,
  invalid_transition: 409,
  agent_dormant: 409,
  agent_not_started: 409,
  agent_destroyed: 410,
  /** An event replay (SSE) from a cursor whose events were pruned by retention; `oldestSeq` is the oldest still kept. */
  cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** A body names a record (journal parent, category, rating target) that does not exist. */
  invalid_reference: 422,
  /** A brake (kill switch) covers this agent, kind or tool. */
  brake_engaged: 423,
  /** The provider secret the endpoint references is missing, revoked or undecryptable. */
  secret_unavailable: 424,
  rate_limited: 429,
  /** A daily budget (tokens, cost, runtime, tool calls) is spent; resets at the tenant's next local midnight. */
  budget_exceeded: 429,
  tool_quota_exceeded: 429,
  internal_error: 500,
  /** The model provider failed after retries and every configured fallback. */
  provider_error: 502,
  /** The deployment lacks a required secret (VIGIL_MASTER_KEY missing or short): fails closed, see docs/operations.md. */
  server_misconfigured: 503,
} as const satisfies Record<ErrorCode, number>;

