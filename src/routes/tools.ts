import { createRoute, z } from "@hono/zod-openapi";
import { fail } from "../http/api-error";
import { requireApiKey, requireScope, tenantStub, requireAdminKey } from "../http/auth";
import { createRouter } from "../http/app";
import { idempotencyKeyOf } from "../http/idempotency";
import { RegisteredTenantTool, RegisterToolBody, TenantTool, ToolIdParam, ToolListing } from "../schema/tools";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** GET|POST /v1/tools, DELETE /v1/tools/:id: the tool catalog and the tenant's HTTP tools (writes need `admin`: they hold secrets). */
export const toolRoutes = createRouter();


toolRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/tools",
    summary: "List the tools agents can be given: every built-in tool, then the tenant's HTTP tools (`http:<name>`)",
    responses: { 200: json(z.object({ data: z.array(ToolListing), nextCursor: z.null() }), "Every tool, in catalog order"), 401: problems[401] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:read");
    const data = await tenantStub(c.env, principal.tenantId).listTools();
    return c.json({ data, nextCursor: null }, 200);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/tools",
    summary: "Register a tenant HTTP tool; its signing secret is returned in this answer only",
    description:
      "Calls are `POST|PUT|PATCH <url>` with the JSON arguments as body, `Vigil-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, \"<t>.\" + body)>` and `Vigil-Operation-Id` (deduplicate on it). The tool's host is the only one the call may reach; redirects are not followed; the answer must be JSON of at most 64 KB within 10 s. `url` must be https.",
    request: { ...jsonBody(RegisterToolBody), headers: IdempotencyHeader },
    responses: { 201: json(RegisteredTenantTool, "The tool and its signing secret (shown once)"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    // Not the generic idempotency store (it would keep the secret in plaintext): the tool id is derived from the key.
    const requestKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const result = await tenantStub(c.env, principal.tenantId).registerTenantTool(`key:${principal.keyId}`, c.req.valid("json"), requestKey);
    if (!result.ok) fail(result);
    return c.json({ ...result.tool, secret: result.secret }, 201);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/tools/{id}",
    summary: "Delete a tenant HTTP tool; calls to it answer unknown_tool at once",
    request: { params: ToolIdParam },
    responses: { 200: json(TenantTool, "The deleted tool"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).deleteTenantTool(`key:${principal.keyId}`, c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(result.tool, 200);
  },
);
