import type { MiddlewareHandler } from "hono";
import { ApiError } from "./api-error";
import type { AppEnv } from "./context";

const JSON_TYPE = /^application\/([a-z.+-]+\+)?json\s*(;|$)/i;

/**
 * Requests with a body must be JSON. Webhook ingress is exempt: it verifies signatures over the raw
 * bytes in whatever type the sender uses.
 */
export function requireJsonBodies(options: { exemptPrefixes: string[] }): MiddlewareHandler<AppEnv> {
  return async function jsonBodiesOnly(c, next) {
    const method = c.req.method;
    if (method === "POST" || method === "PUT" || method === "PATCH") {
      const path = new URL(c.req.url).pathname;
      const hasBody = c.req.header("content-length") !== "0" && (c.req.header("content-length") !== undefined || c.req.header("transfer-encoding") !== undefined);
      const type = c.req.header("content-type");
      if (hasBody && !options.exemptPrefixes.some((prefix) => path.startsWith(prefix)) && !(type && JSON_TYPE.test(type))) {
        throw new ApiError("unsupported_media_type", "send the body as application/json");
      }
    }
    await next();
  };
}
