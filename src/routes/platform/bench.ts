import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import { benchSeamsEnabled } from "../../core/runtime/seams";
import { ApiError, fail } from "../../http/api-error";
import { agentStub, isOperatorToken, requireApiKey } from "../../http/auth";
import type { AppEnv } from "../../http/context";

const BenchBody = z.discriminatedUnion("op", [
  z.object({ op: z.literal("seed"), threadId: z.string(), count: z.number().int().min(1).max(200_000) }),
  z.object({ op: z.literal("appendAndAssemble"), threadId: z.string(), iterations: z.number().int().min(1).max(100_000) }),
  z.object({ op: z.literal("profile"), part: z.enum(["append", "plan", "assemble"]), threadId: z.string(), iterations: z.number().int().min(1).max(100_000) }),
  z.object({ op: z.literal("sqliteWrite"), iterations: z.number().int().min(1).max(100_000) }),
  z.object({ op: z.literal("compact"), threadId: z.string() }),
  z.object({ op: z.literal("seedEvents"), count: z.number().int().min(1).max(200_000) }),
  z.object({ op: z.literal("storage") }),
]);

/** The header that carries the operator token on `/__bench/*` (Authorization names the tenant, by its API key). */
export const BENCH_OPERATOR_HEADER = "x-vigil-operator-token";

/**
 * `/__bench/*` exists only when VIGIL_BENCH=enabled (never in production; `deploy:check` refuses it) and answers only a
 * caller holding both the operator token (in `X-Vigil-Operator-Token`) and an API key of the tenant it measures. A tenant
 * credential without the operator token is 401, the operator token with a widget token 403; without the switch the routes are absent (404).
 */
export function requireBenchOperator(): MiddlewareHandler<AppEnv> {
  return async function benchOperatorOnly(c, next) {
    if (!benchSeamsEnabled(c.env)) throw new ApiError("not_found", "no such route");
    if (!(await isOperatorToken(c.env, c.req.header(BENCH_OPERATOR_HEADER)))) {
      throw new ApiError("unauthorized", "the bench routes need the operator token in X-Vigil-Operator-Token");
    }
    requireApiKey(c.get("principal"));
    await next();
  };
}

/** Not part of the public API. */
export const benchRoutes = new Hono<AppEnv>();
benchRoutes.use("/__bench/*", requireBenchOperator());

benchRoutes.post("/__bench/agents/:id/op", async (c) => {
  const parsed = BenchBody.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) throw new ApiError("validation_failed", parsed.error.message);
  const principal = c.get("principal");
  const result = await agentStub(c.env, principal.tenantId, c.req.param("id")).benchOp(parsed.data);
  if (!result.ok) fail(result);
  return c.json({ done: result.done, ...(result.footprint ? { footprint: result.footprint } : {}) });
});
