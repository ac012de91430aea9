import { Hono } from "hono";
import { z } from "zod";
import { benchSeamsEnabled } from "../../core/runtime/seams";
import { ApiError, fail } from "../../http/api-error";
import { agentStub } from "../../http/auth";
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

/** `/__bench/*` exists only when VIGIL_BENCH=enabled (never in production); not part of the public API. */
export const benchRoutes = new Hono<AppEnv>();

benchRoutes.post("/__bench/agents/:id/op", async (c) => {
  if (!benchSeamsEnabled(c.env)) throw new ApiError("not_found", "no such route");
  const parsed = BenchBody.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) throw new ApiError("validation_failed", parsed.error.message);
  const principal = c.get("principal");
  const result = await agentStub(c.env, principal.tenantId, c.req.param("id")).benchOp(parsed.data);
  if (!result.ok) fail(result);
  return c.json({ done: result.done, ...(result.footprint ? { footprint: result.footprint } : {}) });
});
