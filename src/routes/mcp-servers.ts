import { createRoute, z } from "@hono/zod-openapi";
import { fail } from "../http/api-error";
import { requireAdminKey, requireApiKey, requireScope, tenantStub } from "../http/auth";
import { createRouter } from "../http/app";
import { idempotent, requestKeyedId } from "../http/idempotency";
import { McpServer, McpServerIdParam, RegisterMcpServerBody } from "../schema/mcp-servers";
import { IdempotencyHeader, json, jsonBody, problems, security } from "./openapi-helpers";

/** POST|GET /v1/mcp-servers, DELETE /v1/mcp-servers/:id (issue 15.1): remote MCP servers whose tools agents may call (writes need `admin`). */
export const mcpServerRoutes = createRouter();

mcpServerRoutes.post("/v1/mcp-servers", idempotent());

mcpServerRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/mcp-servers",
    summary: "Register a remote MCP server (streamable HTTP); its tools are offered to agents as `mcp_<server>_<tool>`",
    description:
      "The server's tools are listed now (and cached, refreshed on `notifications/tools/list_changed` and after 5 minutes); a listing that fails keeps the registration and says why in `lastError`. Calls pass the same gates as tenant HTTP tools (capability, category scope, `riskLevel` and approvals, budgets, quotas), carry only the arguments the tool's input schema declares (NEED_TO_KNOW), and may reach only the server's host. A tool the server does not annotate `readOnlyHint: true` is mutating: it runs as a saga and is sent at most once per operationId. In deployed mode `url` must be https to a public host.",
    request: { ...jsonBody(RegisterMcpServerBody), headers: IdempotencyHeader },
    responses: { 201: json(McpServer, "The server and its tools as listed"), 400: problems[400], 401: problems[401], 409: problems[409] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const body = c.req.valid("json");
    const result = await tenantStub(c.env, principal.tenantId).registerMcpServer(`key:${principal.keyId}`, body, requestKeyedId(c, principal.tenantId, "mcp_", body));
    if (!result.ok) fail(result);
    return c.json(result.server, 201);
  },
);

mcpServerRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/mcp-servers",
    summary: "List the tenant's MCP servers with their cached tool lists",
    responses: { 200: json(z.object({ data: z.array(McpServer), nextCursor: z.null() }), "Every live server, oldest first"), 401: problems[401] },
    security,
  }),
  async (c) => {
    const principal = c.get("principal");
    requireApiKey(principal);
    requireScope(principal, "agents:read");
    return c.json({ data: await tenantStub(c.env, principal.tenantId).listMcpServers(), nextCursor: null }, 200);
  },
);

mcpServerRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/mcp-servers/{id}",
    summary: "Delete an MCP server; calls to its tools answer unknown_tool at once",
    request: { params: McpServerIdParam },
    responses: { 200: json(McpServer, "The deleted server"), 401: problems[401], 404: problems[404] },
    security,
  }),
  async (c) => {
    const principal = requireAdminKey(c.get("principal"));
    const result = await tenantStub(c.env, principal.tenantId).deleteMcpServer(`key:${principal.keyId}`, c.req.valid("param").id);
    if (!result.ok) fail(result);
    return c.json(result.server, 200);
  },
);
