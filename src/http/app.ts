import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { ApiError, problemResponse } from "./api-error";
import type { AppEnv } from "./context";
import { isMasterKeyMissing, masterKeyProblem } from "../core/egress/master-key";
import type { MiddlewareHandler } from "hono";

const misconfigured = () => new ApiError("server_misconfigured", "this deployment is missing a required secret (VIGIL_MASTER_KEY); its operator must set it (docs/operations.md)");

/**
 * Fails closed before any work: with an unusable master key nothing under /v1 answers but 503
 * `server_misconfigured` (nothing could be sealed, verified or minted safely). The reason stays in the log.
 */
export function requireSecrets(): MiddlewareHandler<AppEnv> {
  return async function requireSecretsMiddleware(c, next) {
    const problem = masterKeyProblem(c.env.VIGIL_MASTER_KEY);
    if (problem !== null) {
      console.error(JSON.stringify({ level: "error", msg: "server misconfigured", problem }));
      throw misconfigured();
    }
    await next();
  };
}

/** Validation failures become one problem+json shape listing every failing field. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (result.success) return;
      const fields = result.error.issues.map((issue) => ({ path: issue.path.join(".") || "(root)", message: issue.message }));
      throw new ApiError("validation_failed", `invalid ${result.target}: ${fields.map((f) => `${f.path}: ${f.message}`).join("; ")}`, { fields });
    },
  });
}

/** The single place an exception becomes a response. Unknown errors are logged without bodies or secrets. */
export function toErrorResponse(error: unknown, request: Request): Response {
  if (error instanceof ApiError) return problemResponse(error);
  if (isMasterKeyMissing(error)) return problemResponse(misconfigured());
  if (error instanceof HTTPException) {
    if (/content-type/i.test(error.message)) {
      return problemResponse(new ApiError("unsupported_media_type", "send the body as application/json", { status: 415 }));
    }
    if (error.status === 400) return problemResponse(new ApiError("invalid_json", "the request body is not valid JSON"));
    if (error.status === 413) return problemResponse(new ApiError("payload_too_large", "the request body is too large"));
    return problemResponse(new ApiError("validation_failed", error.message, { status: error.status }));
  }
  console.error(JSON.stringify({ level: "error", msg: "unhandled error", path: new URL(request.url).pathname, error: String(error) }));
  return problemResponse(new ApiError("internal_error", "an internal error occurred"));
}
