import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";

/**
 * CORS for the API (`/v1/*`), so the chat widget and browser apps on other origins can call it.
 * Credentials are bearer tokens (API keys, widget JWTs) sent explicitly, never cookies, so any
 * origin may be allowed (`*`) without `Allow-Credentials`: a page can only use a token it already
 * holds. Preflights are answered here, before authentication (browsers send them without credentials).
 */
export const CORS_ALLOWED_HEADERS = ["Authorization", "Content-Type", "Accept", "Idempotency-Key", "Last-Event-ID", "If-Match", "Mcp-Protocol-Version"] as const;
/** Response headers browser code may read: rate limits, idempotent replays, run keys and event cursors. */
export const CORS_EXPOSED_HEADERS = ["Retry-After", "Idempotent-Replayed", "WWW-Authenticate", "X-Vigil-Run-Key", "X-Vigil-Event-Seq"] as const;
export const CORS_ALLOWED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export const CORS_MAX_AGE_SECONDS = 600;
const EXPOSED = CORS_EXPOSED_HEADERS.join(", ");

export function cors(): MiddlewareHandler<AppEnv> {
  return async function corsHeaders(c, next) {
    if (c.req.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": CORS_ALLOWED_METHODS.join(", "),
          "access-control-allow-headers": CORS_ALLOWED_HEADERS.join(", "),
          "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
        },
      });
    }
    await next();
    try {
      c.res.headers.set("access-control-allow-origin", "*");
    } catch {
      // Headers of a response passed through from fetch() are immutable: copy it once. Only then is
      // `c.res` assigned: Hono's setter copies the response and its headers on every assignment.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("access-control-allow-origin", "*");
    }
    c.res.headers.set("access-control-expose-headers", EXPOSED);
  };
}
