import { Hono } from "hono";
import { seamOn } from "../../core/runtime/seams";
import { ApiError, fail } from "../../http/api-error";
import { agentStub, isOperator, tenantStub } from "../../http/auth";
import type { AppEnv } from "../../http/context";
import { ResourceId } from "../../schema/common";

/**
 * `/__debug/*` exists only with the `dumps` test seam, for the operator token only; not part
 * of the public API. It dumps every SQLite row of a tenant's or an agent's Durable Object, so a test
 * can prove a secret is stored nowhere in plaintext.
 */
export const debugRoutes = new Hono<AppEnv>();

debugRoutes.use("/__debug/*", async (c, next) => {
  if (!seamOn(c.env, "dumps")) throw new ApiError("not_found", "no such route");
  if (!(await isOperator(c.env, c.req.header("authorization")))) throw new ApiError("unauthorized", "this endpoint needs the operator token");
  await next();
});

function idParam(value: string, name: string): string {
  const parsed = ResourceId.safeParse(value);
  if (!parsed.success) throw new ApiError("validation_failed", `${name}: ${parsed.error.issues[0]?.message ?? "invalid"}`, { fields: [{ path: name, message: "not a valid id" }] });
  return parsed.data;
}

debugRoutes.get("/__debug/tenants/:tenantId/dump", async (c) => {
  const tenantId = idParam(c.req.param("tenantId"), "tenantId");
  const result = await tenantStub(c.env, tenantId).debugDumpTables();
  if (!result.ok) fail(result);
  return c.json({ tables: result.tables });
});

debugRoutes.get("/__debug/tenants/:tenantId/agents/:agentId/dump", async (c) => {
  const tenantId = idParam(c.req.param("tenantId"), "tenantId");
  const agentId = idParam(c.req.param("agentId"), "agentId");
  const result = await agentStub(c.env, tenantId, agentId).debugDumpTables();
  if (!result.ok) fail(result);
  return c.json({ tables: result.tables });
});
