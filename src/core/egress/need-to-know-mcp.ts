/**
 * NEED_TO_KNOW for the `mcp_request` boundary: the final guard on the bytes of every
 * JSON-RPC message Vigil sends to a tenant's MCP server. Per method, only the fields the protocol
 * needs may leave; a `tools/call` carries `params.name` and, under `params.arguments`, only the
 * properties the tool's input schema declares (each with its whole value: that is the content the
 * tool asked for). Anything else — an undeclared argument, a batch, `_meta` — blocks the request.
 */
import { guardPayload, type GuardResult } from "./need-to-know";

const ENVELOPE = ["jsonrpc", "id", "method"];

const BY_METHOD: Record<string, readonly string[]> = {
  initialize: ["params.protocolVersion", "params.capabilities.*", "params.clientInfo.name", "params.clientInfo.version"],
  "notifications/initialized": [],
  "notifications/cancelled": ["params.requestId", "params.reason"],
  ping: [],
  "tools/list": ["params.cursor"],
};

/** The allowlist of one message; `declared` are the called tool's input schema properties (tools/call only). */
export function mcpRequestAllowlist(method: string, declared: readonly string[] | null): readonly string[] {
  if (method === "tools/call") return [...ENVELOPE, "params.name", "params.arguments", ...(declared ?? []).map((name) => `params.arguments.${name}.*`)];
  const fields = BY_METHOD[method];
  return fields ? [...ENVELOPE, ...fields] : ENVELOPE;
}

/** The property names an input schema declares at its root (nothing else may be sent). */
export function declaredArguments(inputSchema: Record<string, unknown>): string[] {
  const properties = inputSchema.properties;
  return properties && typeof properties === "object" && !Array.isArray(properties) ? Object.keys(properties) : [];
}

/**
 * Guards one request body (parsed JSON). `declaredFor` answers the input schema properties of a tool
 * by its remote name (null: not a tool of this server, so nothing under `arguments` may leave).
 */
export function guardMcpRequest(body: unknown, declaredFor: (remoteName: string) => readonly string[] | null): GuardResult {
  if (!body || typeof body !== "object" || Array.isArray(body)) return { ok: false, code: "overshared_payload_blocked", fields: ["(not a single JSON-RPC message)"] };
  const message = body as { method?: unknown; params?: { name?: unknown } };
  const method = typeof message.method === "string" ? message.method : "";
  const declared = method === "tools/call" && typeof message.params?.name === "string" ? declaredFor(message.params.name) : null;
  return guardPayload(body, mcpRequestAllowlist(method, declared));
}
