/**
 * `POST|GET /v1/mcp-servers`, `DELETE /v1/mcp-servers/:id`. A registered remote MCP
 * server's tools are offered to agents as `mcp_<server>_<tool>` with the server's input schemas.
 */
import { z } from "@hono/zod-openapi";
import { RISK_LEVELS } from "../../core/tools/tool-envelopes";
import { CAPABILITIES } from "../../tools/registry/types";
import { IsoTimestamp } from "../common";

/** No `_`: the model-facing name `mcp_<server>_<tool>` splits at the first `_` after the prefix. */
export const MCP_SERVER_NAME = /^[a-z][a-z0-9]{0,23}$/;
export const MCP_TOOL_PREFIX = "mcp_";

const McpAuth = z
  .union([
    z.literal("none"),
    z.object({ secretRefId: z.string().min(1).max(64).openapi({ description: "A provider secret stored with `provider: \"mcp-<name>\"` (POST /v1/providers/secrets); sent as `Authorization: Bearer <secret>`" }) }).strict(),
  ])
  .openapi({ description: '`"none"`, or `{secretRefId}`' });

export const RegisterMcpServerBody = z
  .object({
    name: z.string().regex(MCP_SERVER_NAME, "name must be 1-24 characters of a-z 0-9, starting with a letter (no _)").openapi({ example: "github" }),
    url: z.string().max(2_048).openapi({ description: "The server's streamable HTTP endpoint (https; plain http to loopback only in local mode); its host joins this tenant's egress allowlist", example: "https://mcp.example.com/mcp" }),
    auth: McpAuth.default("none"),
    riskLevel: z.enum(RISK_LEVELS).default("medium").openapi({ description: "The risk level of every tool of this server (drives approvals)" }),
    capability: z.enum(CAPABILITIES).openapi({ description: "The capability an agent must hold to call this server's tools" }),
    toolFilter: z.array(z.string().min(1).max(128)).min(1).max(200).optional().openapi({ description: "Only these tools (the server's own names) are offered; all when omitted" }),
  })
  .strict()
  .openapi("RegisterMcpServer");
export type RegisterMcpServerBody = z.output<typeof RegisterMcpServerBody>;

export const McpServerTool = z
  .object({
    name: z.string().openapi({ description: "The name agents call: `mcp_<server>_<tool>`" }),
    remoteName: z.string().openapi({ description: "The tool's name on the server" }),
    description: z.string(),
    mutating: z.boolean().openapi({ description: "false only when the server annotates the tool `readOnlyHint: true`; a mutating call runs as a saga" }),
  })
  .openapi("McpServerTool");

export const McpServer = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    auth: McpAuth,
    riskLevel: z.enum(RISK_LEVELS),
    capability: z.enum(CAPABILITIES),
    toolFilter: z.array(z.string()).nullable(),
    tools: z.array(McpServerTool),
    toolsVersion: z.number().int().openapi({ description: "Bumped whenever the server's tool list changes" }),
    toolsFetchedAt: IsoTimestamp.nullable().openapi({ description: "When the list was last fetched; null while it is marked stale (notifications/tools/list_changed)" }),
    lastError: z.string().nullable().openapi({ description: "Why the last listing failed (the cached list stays in use)" }),
    createdAt: IsoTimestamp,
  })
  .openapi("McpServer");
export type McpServer = z.infer<typeof McpServer>;

export const McpServerIdParam = z.object({ id: z.string().max(64).openapi({ param: { name: "id", in: "path" } }) });
