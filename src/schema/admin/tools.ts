/**
 * `GET|POST /v1/tools`, `DELETE /v1/tools/:id`. A tenant tool is
 * called by agents as `http:<name>`: a signed JSON request to its URL. The listing carries every
 * built-in tool's descriptor and the tenant's tools in the same descriptor shape.
 */
import { z } from "@hono/zod-openapi";
import { RISK_LEVELS } from "../../core/tools/tool-envelopes";
import { CAPABILITIES } from "../../tools/registry/types";
import { IsoTimestamp } from "../common";

/** Methods that carry the signed JSON body. */
export const TENANT_TOOL_METHODS = ["POST", "PUT", "PATCH"] as const;
export const TENANT_TOOL_NAME = /^[a-z][a-z0-9_]{0,47}$/;
export const HTTP_TOOL_PREFIX = "http:";

/** Model-facing (agent side; function names cannot hold `:`) name of a tenant HTTP tool, and back: `http:weather` ⇄ `http_weather`. */
export const httpModelName = (listingName: string) => `http_${listingName.replace(/^http:/, "")}`;
export const httpInvocationName = (modelName: string) => `http:${modelName.replace(/^http_/, "")}`;
export const isHttpModelName = (name: string) => name.startsWith("http_");
/** A tool the tenant registered (HTTP, or an MCP server's `mcp_<server>_<tool>`): gated like HTTP tools, executed by the TenantDO. */
export const isTenantToolModelName = (name: string) => isHttpModelName(name) || name.startsWith("mcp_");

const JsonObject = z.record(z.string(), z.unknown());

export const RegisterToolBody = z
  .object({
    name: z.string().regex(TENANT_TOOL_NAME, "name must be 1-48 characters of a-z 0-9 _, starting with a letter").openapi({ example: "crm_lookup" }),
    description: z.string().trim().min(1, "description must not be empty").max(1_000),
    inputSchema: JsonObject.openapi({ description: 'JSON Schema (2020-12) of the arguments object; its root has "type": "object"' }),
    url: z.string().max(2_048).openapi({ description: "https URL the call is sent to; its host is the only one this tool may reach", example: "https://tools.example.com/crm" }),
    method: z.enum(TENANT_TOOL_METHODS).default("POST"),
    riskLevel: z.enum(RISK_LEVELS).default("medium"),
    capability: z.enum(CAPABILITIES).openapi({ description: "the capability an agent must hold to call the tool" }),
  })
  .strict()
  .openapi("RegisterTenantTool");
export type RegisterToolBody = z.output<typeof RegisterToolBody>;

export const TenantTool = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    inputSchema: JsonObject,
    url: z.string(),
    method: z.enum(TENANT_TOOL_METHODS),
    riskLevel: z.enum(RISK_LEVELS),
    capability: z.enum(CAPABILITIES),
    createdAt: IsoTimestamp,
  })
  .openapi("TenantTool");
export type TenantTool = z.infer<typeof TenantTool>;

export const RegisteredTenantTool = TenantTool.extend({
  secret: z.string().openapi({ description: "Signing secret of the tool's requests (Vigil-Signature); shown in this answer only" }),
}).openapi("RegisteredTenantTool");

/** A tool as offered to agents: the registry descriptor shape; tenant tools add id, url, method, createdAt. */
export const ToolListing = z
  .object({
    kind: z.enum(["builtin", "http", "mcp"]),
    name: z.string(),
    version: z.number().int(),
    description: z.string(),
    riskLevel: z.enum(RISK_LEVELS),
    supportsPreview: z.boolean(),
    capabilitiesRequired: z.array(z.string()),
    allowedWakeReasons: z.array(z.string()),
    idempotencyStrategy: z.string(),
    scopeRules: z.array(z.string()),
    sideEffects: z.object({ kind: z.string(), entityTypes: z.array(z.string()), semanticKeys: z.array(z.string()) }),
    dataMinimizationPolicyRef: z.string(),
    inputSchema: JsonObject,
    outputSchema: JsonObject,
    id: z.string().optional(),
    url: z.string().optional(),
    method: z.enum(TENANT_TOOL_METHODS).optional(),
    createdAt: IsoTimestamp.optional(),
  })
  .openapi("ToolListing");
export type ToolListing = z.infer<typeof ToolListing>;

export const ToolIdParam = z.object({ id: z.string().max(64).openapi({ param: { name: "id", in: "path" } }) });
