import { failure, type Result } from "../../../core/runtime/result";
import type { RegisterToolBody, TenantTool, ToolListing } from "../../../schema/admin/tools";
import { listToolDescriptors } from "../../../tools/registry";
import type { Audit } from "../types";
import type { TenantTools, ToolRegistration } from "./http-tools";
import type { McpServers } from "./mcp-servers";

/** `GET/POST/DELETE /v1/tools`: the built-in registry, the tenant's HTTP tools (registrations audited) and its MCP tools. */
export class ToolCatalog {
  constructor(private readonly deps: { tenantTools: TenantTools; mcpServers: McpServers; audit: Audit }) {}

  /** The built-in registry, then the tenant's HTTP tools, then its MCP servers' tools (lists past their TTL fetched first). */
  async list(): Promise<ToolListing[]> {
    const builtin = listToolDescriptors().map((descriptor): ToolListing => ({ kind: "builtin", ...descriptor }));
    return [...builtin, ...this.deps.tenantTools.descriptors(), ...(await this.deps.mcpServers.listings())];
  }

  async register(actor: string, body: RegisterToolBody, requestKey?: string): Promise<ToolRegistration> {
    const result = await this.deps.tenantTools.register(body, requestKey);
    if (result.ok && result.created) this.deps.audit(actor, "tool.registered", result.tool.id, { name: result.tool.name, host: new URL(result.tool.url).host });
    return result;
  }

  delete(actor: string, id: string): Result<{ tool: TenantTool }> {
    const tool = this.deps.tenantTools.delete(id);
    if (!tool) return failure("not_found", "tool not found");
    this.deps.audit(actor, "tool.deleted", id, { name: tool.name });
    return { ok: true, tool };
  }
}
