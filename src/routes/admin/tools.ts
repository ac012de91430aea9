import { createRouter } from "../../http/app";
import { RegisteredTenantTool, RegisterToolBody, TenantTool, ToolIdParam, ToolListing } from "../../schema/admin/tools";
import { adminByIdRoutes, adminCreateRoute } from "./admin-resource-routes";
import { wholeListRoute } from "../list-route";

/** GET|POST /v1/tools, DELETE /v1/tools/:id: the tool catalog and the tenant's HTTP tools (writes need `admin`: they hold secrets). */
export const toolRoutes = createRouter();

wholeListRoute(toolRoutes, {
  path: "/v1/tools",
  summary: "List the tools agents can be given: every built-in tool, then the tenant's HTTP tools (`http:<name>`)",
  item: ToolListing,
  pageDescription: "Every tool, in catalog order",
  read: (tenant) => tenant.listTools(),
});

adminCreateRoute(toolRoutes, {
  path: "/v1/tools",
  summary: "Register a tenant HTTP tool; its signing secret is returned in this answer only",
  description:
    "Calls are `POST|PUT|PATCH <url>` with the JSON arguments as body, `Vigil-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, \"<t>.\" + body)>` and `Vigil-Operation-Id` (deduplicate on it). The tool's host is the only one the call may reach; redirects are not followed; the answer must be JSON of at most 64 KB within 10 s. `url` must be https.",
  body: RegisterToolBody,
  created: RegisteredTenantTool,
  answer: "The tool and its signing secret (shown once)",
  // The tool id is derived from the Idempotency-Key (the generic store would keep the secret in plaintext).
  create: ({ tenant, actor, body, requestKey }) => tenant.registerTenantTool(actor, body, requestKey),
  view: ({ tool, secret }) => ({ ...tool, secret }),
});

adminByIdRoutes(toolRoutes, {
  path: "/v1/tools/{id}",
  params: ToolIdParam,
  item: TenantTool,
  delete: { summary: "Delete a tenant HTTP tool; calls to it answer unknown_tool at once", answer: "The deleted tool", call: (tenant, actor, id) => tenant.deleteTenantTool(actor, id) },
  view: ({ tool }) => tool,
});
