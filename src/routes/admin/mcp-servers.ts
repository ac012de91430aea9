import { createRouter } from "../../http/app";
import { idempotent, requestKeyedId } from "../../http/idempotency";
import { McpServer, McpServerIdParam, RegisterMcpServerBody } from "../../schema/admin/mcp-servers";
import { adminByIdRoutes, adminCreateRoute } from "./admin-resource-routes";
import { wholeListRoute } from "../list-route";

/** POST|GET /v1/mcp-servers, DELETE /v1/mcp-servers/:id: remote MCP servers whose tools agents may call (writes need `admin`). */
export const mcpServerRoutes = createRouter();

mcpServerRoutes.post("/v1/mcp-servers", idempotent());

adminCreateRoute(mcpServerRoutes, {
  path: "/v1/mcp-servers",
  summary: "Register a remote MCP server (streamable HTTP); its tools are offered to agents as `mcp_<server>_<tool>`",
  description:
    "The server's tools are listed now (and cached, refreshed on `notifications/tools/list_changed` and after 5 minutes); a listing that fails keeps the registration and says why in `lastError`. Calls pass the same gates as tenant HTTP tools (capability, category scope, `riskLevel` and approvals, budgets, quotas), carry only the arguments the tool's input schema declares (NEED_TO_KNOW), and may reach only the server's host. A tool the server does not annotate `readOnlyHint: true` is mutating: it runs as a saga and is sent at most once per operationId. In deployed mode `url` must be https to a public host.",
  body: RegisterMcpServerBody,
  created: McpServer,
  answer: "The server and its tools as listed",
  create: ({ tenant, tenantId, actor, body }, c) => tenant.registerMcpServer(actor, body, requestKeyedId(c, tenantId, "mcp_", body)),
  view: ({ server }) => server,
});

wholeListRoute(mcpServerRoutes, {
  path: "/v1/mcp-servers",
  summary: "List the tenant's MCP servers with their cached tool lists",
  item: McpServer,
  pageDescription: "Every live server, oldest first",
  read: (tenant) => tenant.listMcpServers(),
});

adminByIdRoutes(mcpServerRoutes, {
  path: "/v1/mcp-servers/{id}",
  params: McpServerIdParam,
  item: McpServer,
  delete: { summary: "Delete an MCP server; calls to its tools answer unknown_tool at once", answer: "The deleted server", call: (tenant, actor, id) => tenant.deleteMcpServer(actor, id) },
  view: ({ server }) => server,
});
