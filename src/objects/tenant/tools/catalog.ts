import { failure, type Result } from "../../../core/result";
import type { RegisterToolBody, TenantTool, ToolListing } from "../../../schema/tools";
import { listToolDescriptors } from "../../../tools/registry";
import type { Audit } from "../types";
import type { TenantTools, ToolRegistration } from "./http-tools";

/** `GET/POST/DELETE /v1/tools`: the built-in registry and the tenant's HTTP tools (registrations audited). */
export class ToolCatalog {
  constructor(private readonly deps: { tenantTools: TenantTools; audit: Audit }) {}

  /** The built-in registry, then the tenant's HTTP tools. */
  list(): ToolListing[] {
    return [...listToolDescriptors().map((descriptor): ToolListing => ({ kind: "builtin", ...descriptor })), ...this.deps.tenantTools.descriptors()];
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
