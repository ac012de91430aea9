import { createRoute } from "@hono/zod-openapi";
import { ApiError } from "../http/api-error";
import { isOperator, tenantStub } from "../http/auth";
import { createRouter } from "../http/app";
import { fail } from "../http/api-error";
import { idempotent } from "../http/idempotency";
import { randomId } from "../ids";
import { CreateTenantBody, CreateTenantResponse } from "../schema/auth";
import { IdempotencyHeader, json, jsonBody, problems } from "./openapi-helpers";

const OPERATOR_SCOPE = "operator";

export const tenantRoutes = createRouter();

tenantRoutes.use("/v1/tenants", async (c, next) => {
  if (!isOperator(c.env, c.req.header("authorization"))) throw new ApiError("unauthorized", "this endpoint needs the operator token");
  await next();
});
tenantRoutes.post("/v1/tenants", idempotent({ storeIn: () => OPERATOR_SCOPE }));

tenantRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/tenants",
    summary: "Create a tenant (operator); returns its first API key once",
    request: { ...jsonBody(CreateTenantBody), headers: IdempotencyHeader },
    responses: { 201: json(CreateTenantResponse, "The tenant and its first API key"), 400: problems[400], 401: problems[401] },
    security: [{ operator: [] }],
  }),
  async (c) => {
    const body = c.req.valid("json");
    const tenantId = randomId("t", 16);
    const result = await tenantStub(c.env, tenantId).initTenant(tenantId, body.name, body.timeZone);
    if (!result.ok) fail(result);
    return c.json({ tenant: result.tenant, apiKey: result.apiKey }, 201);
  },
);
