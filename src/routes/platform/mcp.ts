import { createRoute, z } from "@hono/zod-openapi";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { createRouter } from "../../http/app";
import { mcpServerFor } from "../../mcp-server";
import { jsonBody, problems, security } from "../openapi-helpers";

/**
 * The MCP server: streamable HTTP at /v1/mcp behind the same authentication, credential cache and
 * per-client rate limit as every REST route. Stateless: each request gets a fresh server bound to its caller, so
 * no MCP session outlives the request.
 */
export const mcpRoutes = createRouter();

const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number()]).nullable().optional(),
    method: z.string().max(200).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    result: z.unknown().optional(),
    error: z.unknown().optional(),
  })
  .passthrough()
  .openapi("McpJsonRpcMessage", { description: "One JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, …)" });

/** Hands one request to the SDK's stateless handler, with a server whose tools act as the authenticated caller. */
function serveMcp(request: Request, env: Parameters<typeof mcpServerFor>[0], principal: Parameters<typeof mcpServerFor>[1], parsedBody?: unknown): Promise<Response> {
  const handler = createMcpHandler(() => mcpServerFor(env, principal), { maxRequestBodySize: 1024 * 1024 });
  return handler.fetch(request, parsedBody === undefined ? {} : { parsedBody });
}

mcpRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/mcp",
    summary:
      "Model Context Protocol server (streamable HTTP, stateless). Tools: list_agents, send_message, get_history, list_decisions, resolve_decision, search_memory; each needs the scope its REST route needs",
    request: jsonBody(z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(50)])),
    responses: {
      200: {
        content: { "application/json": { schema: z.unknown() }, "text/event-stream": { schema: z.string() } },
        description: "The JSON-RPC response (a tool's refusal is a result with isError and the REST problem code)",
      },
      202: { description: "A notification or response was accepted" },
      400: problems[400],
      401: problems[401],
      429: problems[429],
    },
    security,
  }),
  async (c) => serveMcp(c.req.raw, c.env, c.get("principal"), c.req.valid("json")) as never,
);

// Every other method (GET opens, DELETE ends a session stream) reaches the transport, which answers 405 as MCP
// specifies for a server without sessions. POST never gets here: the documented route above answers it.
mcpRoutes.all("/v1/mcp", (c) => serveMcp(c.req.raw, c.env, c.get("principal")));
