import { Hono } from "hono";
import { ApiError, fail } from "../../http/api-error";
import { requireApiKey, tenantStub } from "../../http/auth";
import type { AppEnv } from "../../http/context";
import { requireBenchOperator } from "./bench";
import { AlertnessBenchOp } from "../../objects/tenant/alertness";

/** `POST /__bench/tenant/alertness`: exists only when VIGIL_BENCH=enabled; not part of the public API. */
export const benchAlertnessRoutes = new Hono<AppEnv>();

benchAlertnessRoutes.use("/__bench/tenant/*", requireBenchOperator());

benchAlertnessRoutes.post("/__bench/tenant/alertness", async (c) => {
  const principal = c.get("principal");
  requireApiKey(principal);
  const parsed = AlertnessBenchOp.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) throw new ApiError("validation_failed", parsed.error.message);
  const result = await tenantStub(c.env, principal.tenantId).benchAlertness(parsed.data);
  if (!result.ok) fail(result);
  return c.json(result.answer);
});
