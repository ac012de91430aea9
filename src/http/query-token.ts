import { ApiError } from "./api-error";

/** The event streams: the only routes a browser's EventSource reaches, and it cannot set headers. */
const SSE_PATHS = [/^\/v1\/agents\/[A-Za-z0-9_-]{1,64}\/events$/, /^\/v1\/events\/stream$/];

/**
 * `?access_token=` carries a credential in the URL, where proxies, browsers and logs keep it. It is
 * accepted only where EventSource leaves no other way (a GET of an event stream) and only for a widget
 * token (short-lived, confined to its agents): an API key in a URL is refused, never used.
 */
export function queryAccessToken(method: string, url: string): string | null {
  const parsed = new URL(url);
  const token = parsed.searchParams.get("access_token");
  if (token === null) return null;
  if (method !== "GET" || !SSE_PATHS.some((path) => path.test(parsed.pathname))) {
    throw new ApiError("unauthorized", "access_token is accepted only on event streams (GET …/events, /v1/events/stream); send Authorization: Bearer <credential>");
  }
  if (token.startsWith("vk_")) throw new ApiError("unauthorized", "API keys are never accepted in a URL; send Authorization: Bearer <API key> (access_token is for widget tokens)");
  return token;
}
