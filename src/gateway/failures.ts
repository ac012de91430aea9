/**
 * What went wrong with one provider attempt, read from what the `ai` SDK (or the runtime's fetch)
 * threw, in the terms of the retry core (src/core/runtime/provider-retry.ts).
 */
import { parseRetryAfter, type ProviderFailureInput } from "../core/runtime/provider-retry";

const CONNECTION = /fetch failed|network|connection|socket|econn|reset|refused|closed|terminated|disconnected/i;

export function failureOf(error: unknown, nowMs: number): ProviderFailureInput {
  const err = error as { name?: string; message?: string; statusCode?: number; responseHeaders?: Record<string, string>; data?: unknown; cause?: unknown } | null;
  if (!err || typeof err !== "object") return { type: "invalid_response" };
  if (err.name === "TimeoutError" || err.name === "AbortError") return { type: "timeout" };
  if (err.name === "AI_APICallError") {
    if (typeof err.statusCode === "number") {
      const retryAfterMs = parseRetryAfter(header(err.responseHeaders, "retry-after"), nowMs);
      const errorCode = providerErrorCode(err.data);
      return { type: "http", status: err.statusCode, ...(retryAfterMs !== undefined && { retryAfterMs }), ...(errorCode && { errorCode }) };
    }
    return { type: "connection" };
  }
  if (err.name === "AI_RetryError" && err.cause) return failureOf(err.cause, nowMs);
  if (err instanceof TypeError && CONNECTION.test(err.message ?? "")) return { type: "connection" };
  if (typeof err.message === "string" && CONNECTION.test(err.message) && !err.name?.startsWith("AI_")) return { type: "connection" };
  // Unparsable JSON, a stream without a finish reason, a shape the SDK rejects: the answer is bad.
  return { type: "invalid_response" };
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** OpenAI-style `{error: {code}}` or Anthropic-style `{error: {type}}`. */
function providerErrorCode(data: unknown): string | undefined {
  const error = (data as { error?: { code?: unknown; type?: unknown } } | null)?.error;
  if (typeof error?.code === "string") return error.code;
  if (typeof error?.type === "string" && error.type === "context_length_exceeded") return error.type;
  return undefined;
}
