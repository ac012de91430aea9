/** Codes a model call can end with (all in src/http/error-codes.ts). */
export type GatewayCode =
  | "out_of_scope"
  | "model_not_allowed"
  | "provider_not_allowed"
  | "privacy_confirmation_required"
  | "secret_unavailable"
  | "overshared_payload_blocked"
  | "network_denied"
  | "provider_error"
  | "rate_limited";

/** Which gate refused (no bytes were sent), or `provider` when the provider itself failed. */
export type GatewayStage = "scope" | "grant" | "need_to_know" | "egress" | "provider";

/**
 * A model call that did not produce an answer. `code` is what the run ends with; the message says
 * what was denied in words fit for the user (never a key, a header or a request body).
 */
export class GatewayError extends Error {
  constructor(
    readonly code: GatewayCode,
    message: string,
    readonly stage: GatewayStage,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "GatewayError";
  }
}

export function isGatewayError(error: unknown): error is GatewayError {
  return error instanceof GatewayError;
}
